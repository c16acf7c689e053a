"""Pilot parts shown on pages of other apps: the customer's order page (the pilot section and
the timeline) and the operators' order page.

Rental never imports pilot; its templates load these tags instead (`{% load pilot %}`).
"""

from django import template

from ..forms import DecisionForm, ReportUploadForm
from ..selectors import order_pilot, order_timeline

register = template.Library()


@register.inclusion_tag("pilot/_order_pilot.html", takes_context=True)
def order_pilot_section(context, order):
    """The order page's pilot section. A form that failed comes back from the view bound, with
    its errors, as `report_form` / `decision_form` (and `report_error`, the service's refusal)."""
    pilot = order_pilot(order)
    return {
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "order": order,
        "pilot": pilot,
        "report_form": context.get("report_form") or ReportUploadForm(),
        "report_error": context.get("report_error"),
        "decision_form": context.get("decision_form") or DecisionForm(reports=pilot.report_choices),
    }


@register.simple_tag
def pilot_timeline(order):
    """{% pilot_timeline order as entries %}: status changes, reports and decisions in time
    order."""
    return order_timeline(order)


@register.inclusion_tag("pilot/_ops_order_pilot.html")
def ops_order_pilot(order):
    """The operators' view of the order's reports and decisions."""
    return {"order": order, "pilot": order_pilot(order)}
