"""The plain peers of the customer pages (bench/plain_pages.py): each written the ordinary way,
an ordinary view with ordinary ORM queries rendering a template of bench/plain_templates/plain/
(`url`, `translate`, `static`, `blocktranslate`, includes as a Django developer writes them), with
the same models, prices, ids and texts as the page it is measured against. Never served outside
the bench."""

from decimal import Decimal

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, render
from django.utils.formats import number_format

from payments.chain.networks import enabled_networks
from payments.crypto.forms import DeclareForm
from payments.crypto.selectors.payment_page import payment_qr_svg
from payments.models import (
    WITHDRAWAL_PENDING_STATUSES,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    Receipt,
    Withdrawal,
)
from rental import capacity
from rental.forms import OrderConfigurationForm, OrderSshKeyForm
from rental.models import GpuModel, LotPrice, Order, OrderStatusChange


def _models():
    return list(
        GpuModel.objects.filter(active=True).prefetch_related(
            Prefetch("lot_prices", queryset=LotPrice.objects.order_by("duration_days"))
        )
    )


def _balance(user) -> Decimal:
    account = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=user
    ).first()
    return account.balance if account else Decimal("0.00")


def _token(units, decimals) -> str:
    return number_format(
        Decimal(int(units)).scaleb(-decimals),
        decimal_pos=decimals,
        use_l10n=True,
        force_grouping=True,
    )


def _stablecoins():
    return [
        (f"{network.key}:{asset.symbol}", network.name, asset)
        for network in enabled_networks().values()
        for asset in network.assets
    ]


@login_required
def catalogue(request):
    models = _models()
    available = capacity.lots_available(models)
    for model in models:
        model.lots_available = available[model.pk]
    return render(request, "plain/catalogue.html", {"gpu_models": models})


@login_required
def configure(request):
    models = _models()
    data = {"gpu_model": models[0].slug, "duration_days": "7", "lots": "1", "preparation": "ubuntu"}
    form = OrderConfigurationForm({**data, **request.GET.dict()}, catalogue=models)
    context = {"form": form}
    if form.is_valid():
        model = form.cleaned_data["gpu_model"]
        price = next(
            p
            for p in model.lot_prices.all()
            if p.duration_days == form.cleaned_data["duration_days"]
        )
        lots = form.cleaned_data["lots"]
        context.update(
            model=model,
            price=price,
            lots=lots,
            cards=lots * model.cards_per_lot,
            total=price.price_usd * lots,
            lots_available=capacity.lots_available([model])[model.pk],
            preparation=dict(form.fields["preparation"].choices)[form.cleaned_data["preparation"]],
        )
    return render(request, "plain/configure.html", context)


@login_required
def order_list(request):
    orders = Order.objects.filter(customer=request.user).order_by("-created_at", "-pk")
    page = Paginator(orders, 25).get_page(request.GET.get("page"))
    return render(request, "plain/order_list.html", {"orders": page.object_list, "page": page})


@login_required
def order_detail(request, order_id):
    order = get_object_or_404(
        Order.objects.prefetch_related(
            Prefetch("status_changes", queryset=OrderStatusChange.objects.order_by("created_at"))
        ),
        pk=order_id,
        customer=request.user,
    )
    payments = list(CryptoPayment.objects.filter(order=order).order_by("-created_at", "-pk"))
    live = next((p for p in payments if p.status in ("awaiting", "detected")), None)
    balance = _balance(request.user)
    still_due = (live.amount_due_units - live.received_units) if live else 0
    return render(
        request,
        "plain/order_detail.html",
        {
            "order": order,
            "payments": payments,
            "live": live,
            "live_network": enabled_networks()[live.network].name if live else "",
            "live_amount": _token(still_due, live.decimals) if live else "",
            "balance": balance,
            "covers": balance >= order.total_usd,
            "shortfall": max(order.total_usd - balance, Decimal("0.00")),
            "stablecoins": _stablecoins(),
            "ssh_key_form": OrderSshKeyForm(customer=request.user),
        },
    )


@login_required
def payment_detail(request, payment_id):
    payment = get_object_or_404(
        CryptoPayment.objects.select_related("order", "deposit_address"),
        pk=payment_id,
        customer=request.user,
    )
    network = enabled_networks()[payment.network]
    asset = next(a for a in network.assets if a.symbol == payment.asset)
    still_due = payment.amount_due_units - payment.received_units
    uri = (
        f"ethereum:{payment.token_address}@{payment.chain_id}/transfer?address="
        f"{payment.deposit_address.address}&uint256={int(still_due)}"
    )
    return render(
        request,
        "plain/payment_detail.html",
        {
            "payment": payment,
            "network": network,
            "asset": asset,
            "amount": _token(still_due, payment.decimals),
            "still_due_usd": payment.amount_due_usd,
            "uri": uri,
            # The same QR code (cached per URI, as the payment page's): the peer measures the page.
            "qr_svg": payment_qr_svg(uri),
            "declare_form": DeclareForm(),
        },
    )


@login_required
def statement(request):
    account = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=request.user
    ).first()
    entries = (
        LedgerEntry.objects.filter(account=account).select_related("transaction").order_by("pk")
        if account
        else []
    )
    return render(
        request,
        "plain/statement.html",
        {
            "balance": account.balance if account else Decimal("0.00"),
            "entries": entries,
            "withdrawals": Withdrawal.objects.filter(
                customer=request.user, status__in=WITHDRAWAL_PENDING_STATUSES
            ).order_by("-pk"),
        },
    )


@login_required
def receipt_list(request):
    receipts = Receipt.objects.filter(customer=request.user).order_by("-number")
    page = Paginator(receipts, 25).get_page(request.GET.get("page"))
    return render(request, "plain/receipt_list.html", {"receipts": page.object_list})
