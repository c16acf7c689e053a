"""Deploy the test stablecoin on the local chain (anvil) once, and remember where it is."""

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from web3 import Web3

from payments.chain import local


class Command(BaseCommand):
    help = (
        "Wait for the local chain (RPC_URL_LOCAL), then reuse the test stablecoin recorded in "
        "var/local-chain.json, or deploy a fresh one and record it (development only)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--wait",
            type=float,
            default=30,
            help="Seconds to wait for the RPC to answer (default 30).",
        )

    def handle(self, *args, **options):
        rpc_url = settings.PAYMENT_RPC_URLS.get("local")
        if not rpc_url:
            raise CommandError(
                "RPC_URL_LOCAL is not set: start the chain with scripts/local-chain "
                "(it sets it to http://127.0.0.1:8545), or export RPC_URL_LOCAL."
            )
        w3 = local.web3_for(rpc_url)
        chain_id = self._wait_for_chain(w3, rpc_url, options["wait"])

        recorded = local.read_local_chain_file()
        token_address = self._reusable_token(w3, recorded, chain_id)
        if token_address:
            self.stdout.write(
                f"Reusing the test stablecoin recorded in {settings.LOCAL_CHAIN_FILE}."
            )
            if recorded.get("rpc_url") != rpc_url:
                local.write_local_chain_file({**recorded, "rpc_url": rpc_url})
        else:
            receipt = local.deploy_token_receipt(w3)
            token_address = Web3.to_checksum_address(receipt["contractAddress"])
            local.write_local_chain_file(
                {
                    "rpc_url": rpc_url,
                    "chain_id": chain_id,
                    "token_address": token_address,
                    "deployed_at_block": int(receipt["blockNumber"]),
                }
            )
            self.stdout.write(
                self.style.SUCCESS(
                    f"Deployed the test stablecoin (tUSDC) in block {receipt['blockNumber']}; "
                    f"recorded in {settings.LOCAL_CHAIN_FILE}."
                )
            )
        self.stdout.write(f"Token address: {token_address}")
        self.stdout.write(f"Chain id: {chain_id}")
        if settings.LOCAL_TOKEN_ADDRESS and token_address != settings.LOCAL_TOKEN_ADDRESS:
            self.stderr.write(
                self.style.WARNING(
                    f"LOCAL_TOKEN_ADDRESS={settings.LOCAL_TOKEN_ADDRESS} is set and overrides "
                    "this token for the site: unset it to use the one above."
                )
            )

    def _wait_for_chain(self, w3: Web3, rpc_url: str, wait_seconds: float) -> int:
        deadline = time.monotonic() + wait_seconds
        announced = False
        while True:
            try:
                return int(w3.eth.chain_id)
            except Exception as exc:  # noqa: BLE001 - any failure means "not answering yet"
                if time.monotonic() >= deadline:
                    raise CommandError(
                        f"The local chain at {rpc_url} did not answer within {wait_seconds:g} s "
                        f"({type(exc).__name__}). Is anvil running? Start it with "
                        "scripts/local-chain."
                    ) from exc
            if not announced:
                self.stdout.write(
                    f"Waiting for the local chain at {rpc_url} (up to {wait_seconds:g} s)..."
                )
                announced = True
            time.sleep(0.5)

    def _reusable_token(self, w3: Web3, recorded: dict | None, chain_id: int) -> str | None:
        """The recorded token when it still exists on this chain, else None (deploy again)."""
        if not recorded or not recorded.get("token_address"):
            return None
        if recorded.get("chain_id") != chain_id:
            self.stdout.write(
                f"The recorded token is on chain {recorded.get('chain_id')}, not {chain_id}: "
                "deploying a new one."
            )
            return None
        address = recorded["token_address"]
        try:
            exists = local.has_code(w3, address)
        except ValueError:  # not an address
            exists = False
        if not exists:
            self.stdout.write(
                f"No contract at the recorded address {address} (a fresh chain?): "
                "deploying a new one."
            )
            return None
        return Web3.to_checksum_address(address)
