"""Send a withdrawal from finance's wallet on the local chain (anvil), as finance would from its
own wallet, and print the transaction hash to enter on the withdrawal's finance page (dev only).

The server never holds a key for real networks: this command refuses any network but "local",
and its default key is anvil's public dev account 2, a test-only key.
"""

from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError
from web3 import Web3

from payments.chain import local
from payments.models import Withdrawal, WithdrawalStatus

# anvil dev account 2 (public test mnemonic): "finance's wallet" on the local chain, TEST ONLY.
FINANCE_WALLET_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"
GAS_FUNDING_WEI = 10**18


class Command(BaseCommand):
    help = (
        "Send an approved withdrawal's amount of the test stablecoin to its address from a local "
        "'finance wallet' (anvil dev account 2) and print the transaction hash. --units sends "
        "another amount (e.g. too little), --to another address, to see the on-chain check refuse."
    )

    def add_arguments(self, parser):
        parser.add_argument("withdrawal_id", type=int, help="The withdrawal id (WDR-… number).")
        parser.add_argument("--units", type=int, help="Token base units to send instead.")
        parser.add_argument("--to", help="Send to this address instead (to see a refusal).")
        parser.add_argument("--from-key", default=FINANCE_WALLET_KEY, help="TEST-ONLY key.")

    def handle(self, *args, **options):
        try:
            withdrawal = Withdrawal.objects.get(pk=options["withdrawal_id"])
        except Withdrawal.DoesNotExist:
            raise CommandError(f"There is no withdrawal #{options['withdrawal_id']}.") from None
        if withdrawal.network != "local":
            raise CommandError(
                f"Withdrawal #{withdrawal.pk} is on {withdrawal.network!r}: this command only "
                "sends on the local chain. On a real network finance sends from its own wallet."
            )
        if withdrawal.status != WithdrawalStatus.APPROVED:
            self.stderr.write(
                self.style.WARNING(
                    f"Withdrawal #{withdrawal.pk} is {withdrawal.get_status_display()!r}, not "
                    "approved: the hash will be refused unless it is approved first."
                )
            )
        try:
            rpc_url = local.running_chain_url()
        except local.LocalChainError as exc:
            raise CommandError(str(exc)) from None
        units = options["units"] if options["units"] is not None else int(withdrawal.amount_units)
        if units <= 0:
            raise CommandError("--units must be positive.")
        to = options["to"] or withdrawal.to_address
        w3 = local.web3_for(rpc_url)
        try:
            sender = w3.eth.account.from_key(options["from_key"])
            token = Web3.to_checksum_address(withdrawal.token_address)
            if not local.has_code(w3, token):
                raise CommandError(f"No token contract at {token} on {rpc_url}.")
            if w3.eth.get_balance(sender.address) < GAS_FUNDING_WEI // 10:
                w3.provider.make_request("anvil_setBalance", [sender.address, hex(GAS_FUNDING_WEI)])
            shortfall = units - local.balance_of(w3, token, sender.address)
            if shortfall > 0:
                local.mint(w3, token, sender.address, shortfall)
            tx_hash = local.transfer(
                w3, token, options["from_key"], Web3.to_checksum_address(to), units
            )
        except CommandError:
            raise
        except Exception as exc:  # noqa: BLE001 - a developer tool: say what failed and stop
            raise CommandError(f"Sending on {rpc_url} failed: {type(exc).__name__}: {exc}") from exc
        amount = Decimal(units) / 10**withdrawal.decimals
        self.stdout.write(
            self.style.SUCCESS(f"Sent {amount} {withdrawal.asset} from {sender.address} to {to}.")
        )
        self.stdout.write(f"Transaction: {tx_hash}")
        self.stdout.write(
            "Enter this hash on the withdrawal's finance page; the worker pays it after "
            f"{withdrawal.confirmations_required} confirmations."
        )
