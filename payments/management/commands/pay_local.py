"""Pay a crypto payment on the local chain (anvil), as a customer's wallet would (dev only)."""

from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError
from web3 import Web3

from payments.chain import local
from payments.models import CryptoPayment

BIGINT_MAX = 2**63 - 1  # no id is larger
# Gas money for a --from-key account that has none (anvil_setBalance: local chain only).
GAS_FUNDING_WEI = 10**18


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise CommandError(
            f"--units must be a whole number of token units, not {text!r}."
        ) from None
    if value <= 0:
        raise CommandError("--units must be positive.")
    return value


class Command(BaseCommand):
    help = (
        "Send the test stablecoin to a local-chain payment's deposit address: by default the "
        "amount still due; --units or --usd to send another amount (under- or overpay)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "payment",
            help="The payment as its page shows it (PAY-000001; pay-000001 or 1 also do).",
        )
        amount = parser.add_mutually_exclusive_group()
        amount.add_argument("--units", help="Amount in token base units (tUSDC has 6 decimals).")
        amount.add_argument("--usd", help="Amount in USD, e.g. 12.50 (1 tUSDC = 1 USD).")
        parser.add_argument(
            "--from-key",
            default=local.PAYER_KEY,
            help="Private key of the paying account (default: anvil dev account 1, TEST ONLY).",
        )

    def handle(self, *args, **options):
        payment = self._payment(options["payment"])
        units = self._units(payment, options["units"], options["usd"])
        try:
            rpc_url = local.running_chain_url()
        except local.LocalChainError as exc:
            raise CommandError(str(exc)) from None
        w3 = local.web3_for(rpc_url)
        try:
            payer = w3.eth.account.from_key(options["from_key"])
        except (ValueError, TypeError) as exc:
            raise CommandError(f"--from-key is not a valid private key ({exc}).") from None

        try:
            token_address = Web3.to_checksum_address(payment.token_address)
            if not local.has_code(w3, token_address):
                raise CommandError(
                    f"No token contract at {token_address} on {rpc_url}: was the chain reset? "
                    "Run `manage.py local_chain_setup` and create a new payment."
                )
            if w3.eth.get_balance(payer.address) < GAS_FUNDING_WEI // 10:
                w3.provider.make_request("anvil_setBalance", [payer.address, hex(GAS_FUNDING_WEI)])
            shortfall = units - local.balance_of(w3, token_address, payer.address)
            if shortfall > 0:
                local.mint(w3, token_address, payer.address, shortfall)
            tx_hash = local.transfer(
                w3, token_address, options["from_key"], payment.deposit_address.address, units
            )
            receipt = w3.eth.get_transaction_receipt(tx_hash)
        except CommandError:
            raise
        except Exception as exc:  # noqa: BLE001 - a developer tool: say what failed and stop
            raise CommandError(f"Paying on {rpc_url} failed: {type(exc).__name__}: {exc}") from exc

        self.stdout.write(
            self.style.SUCCESS(
                f"Sent {units} units ({Decimal(units) / 10**payment.decimals} {payment.asset}) "
                f"from {payer.address} to {payment.deposit_address.address}."
            )
        )
        self.stdout.write(f"Transaction: {tx_hash}")
        self.stdout.write(f"Block: {receipt['blockNumber']}")
        self.stdout.write(
            f"The worker confirms it after {payment.confirmations_required} blocks "
            "(anvil mines a block every few seconds when started by scripts/local-chain)."
        )

    def _payment(self, reference: str) -> CryptoPayment:
        pk = CryptoPayment.pk_from_reference(reference)
        if pk is None:
            raise CommandError(
                f"{reference!r} is not a payment reference: give it as the payment page shows "
                "it, e.g. PAY-000001."
            )
        payments = CryptoPayment.objects.select_related("deposit_address")
        payment = payments.filter(pk=pk).first() if pk <= BIGINT_MAX else None
        if payment is None:
            raise CommandError(
                f"There is no crypto payment {CryptoPayment(pk=pk).reference}: its page says "
                '"Reference PAY-..." under its title.'
            )
        if payment.network != "local":
            raise CommandError(
                f"Payment {payment.reference} is on {payment.network!r}: pay_local only pays on "
                "the local chain."
            )
        return payment

    def _units(self, payment: CryptoPayment, units: str | None, usd: str | None) -> int:
        if units is not None:
            return _positive_int(units)
        if usd is not None:
            try:
                amount = Decimal(usd)
            except InvalidOperation:
                raise CommandError(f"--usd must be an amount like 12.50, not {usd!r}.") from None
            value = amount * 10**payment.decimals
            if not amount.is_finite() or value <= 0 or value != value.to_integral_value():
                raise CommandError(
                    f"--usd must be positive with at most {payment.decimals} decimal places."
                )
            return int(value)
        remaining = int(payment.amount_due_units - payment.received_units)
        if remaining <= 0:
            raise CommandError(
                f"Payment {payment.reference} has already received {payment.received_units} of "
                f"{payment.amount_due_units} units: use --units or --usd to send more."
            )
        if payment.seen_units:
            self.stderr.write(
                self.style.WARNING(
                    f"{payment.seen_units} units are already seen and confirming; sending the "
                    f"{remaining} units not yet confirmed anyway."
                )
            )
        return remaining
