"""The health banner on every operators' page (templates/ops/_nav.html loads it), so that
payments and rental need not import monitoring."""

from django import template

from ..selectors import ops_alerts

register = template.Library()


@register.inclusion_tag("ops/_alerts.html")
def ops_alerts_banner():
    return {"alerts": ops_alerts()}
