"""Pytest plugin: a real local chain (anvil) for the tests, and a LocalChain to drive it.

- `anvil_process` (session): an anvil of the session's own on a free 127.0.0.1 port, mining a
  block per transaction (no block time), chain id 31337; yields its RPC URL.
- `chain_session` (session): a LocalChain on it, with the test stablecoin deployed once and
  PAYER_START_UNITS minted to the payer (anvil account 1).
- `chain` (function): the same LocalChain, the chain snapshotted before the test and reverted
  after it, and the settings pointed at it (PAYMENT_RPC_URLS["local"], LOCAL_TOKEN_ADDRESS).
- `dead_rpc_url`: an RPC URL on which nothing listens.

Registered in tests/conftest.py with `pytest_plugins = ["tests.chain_fixtures"]`.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hexbytes import HexBytes
from web3 import HTTPProvider, Web3

from payments.chain import local
from payments.chain.local import DEPLOYER_KEY, PAYER_KEY

ROOT = Path(__file__).resolve().parent.parent
CHAIN_ID = 31337
START_TIMEOUT_SECONDS = 30
RPC_TIMEOUT_SECONDS = 30
PAYER_START_UNITS = 10**15  # one billion tUSDC (6 decimals)


def anvil_binary() -> str | None:
    """The platform binary of the npm package (no node wrapper in between), else the wrapper,
    else an anvil on PATH."""
    for candidate in sorted(ROOT.glob("node_modules/@foundry-rs/anvil-*/bin/anvil")):
        if os.access(candidate, os.X_OK):
            return str(candidate)
    wrapper = ROOT / "node_modules" / ".bin" / "anvil"
    if os.access(wrapper, os.X_OK):
        return str(wrapper)
    return shutil.which("anvil")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(rpc_url: str) -> bool:
    try:
        return Web3(HTTPProvider(rpc_url, request_kwargs={"timeout": 1})).eth.chain_id == CHAIN_ID
    except Exception:
        return False


def _start_anvil(binary: str, log) -> tuple[subprocess.Popen, str]:
    port = free_port()
    rpc_url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            binary,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--chain-id",
            str(CHAIN_ID),
            "--silent",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break  # it exited (the port was taken in between?): the caller tries again
        if _answers(rpc_url):
            return process, rpc_url
        time.sleep(0.1)
    _stop(process)
    raise RuntimeError(f"anvil did not answer on {rpc_url}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def anvil_process() -> Iterator[str]:
    """An anvil of this test session's own; yields its RPC URL, stops it at the end."""
    binary = anvil_binary()
    if binary is None:
        pytest.fail("anvil is not installed (node_modules/.bin/anvil): run `make install`.")
    with tempfile.TemporaryFile(mode="w+") as log:
        for _attempt in range(3):
            try:
                process, rpc_url = _start_anvil(binary, log)
                break
            except RuntimeError:
                continue
        else:
            log.seek(0)
            pytest.fail(f"anvil ({binary}) did not start; its output:\n{log.read()[-2000:]}")
        try:
            yield rpc_url
        finally:
            _stop(process)


class ChainRpcError(Exception):
    """A JSON-RPC call answered with an error."""


class LocalChain:
    """Drives the test anvil: the token, transfers, blocks, time, snapshots and reorgs."""

    def __init__(self, rpc_url: str):
        self.rpc_url = rpc_url
        self.w3 = Web3(HTTPProvider(rpc_url, request_kwargs={"timeout": RPC_TIMEOUT_SECONDS}))
        self.chain_id = self.w3.eth.chain_id
        self.deployer = local.address_of(DEPLOYER_KEY)
        self.payer = local.address_of(PAYER_KEY)
        self.token_address = local.deploy_token(self.w3, DEPLOYER_KEY)
        self.token = local.token_contract(self.w3, self.token_address)
        # The payer starts rich, so that a test's transfer is one transaction in one block.
        self.mint(self.payer, PAYER_START_UNITS)

    def __repr__(self) -> str:
        return f"<LocalChain {self.rpc_url} token {self.token_address}>"

    # Raw access -------------------------------------------------------------------------------

    def rpc(self, method: str, params: list | None = None) -> Any:
        """A raw JSON-RPC call; its result, or ChainRpcError with the node's error."""
        response = self.w3.provider.make_request(method, params or [])
        if response.get("error"):
            raise ChainRpcError(f"{method}: {response['error']}")
        return response.get("result")

    # The token ----------------------------------------------------------------------------------

    def mint(self, to: str, units: int) -> str:
        """Mint test stablecoin units to `to`; the tx hash (0x hex)."""
        return local.mint(self.w3, self.token_address, to, units)

    def transfer(self, to: str, units: int, from_key: str = PAYER_KEY) -> str:
        """An ERC-20 transfer from the key's account (the payer by default); the tx hash.

        The sender is minted what it lacks first (one more block), so the transfer never fails
        for want of tokens; the payer starts with PAYER_START_UNITS, so usually it lacks none.
        """
        sender = local.address_of(from_key)
        shortfall = int(units) - self.balance_of(sender)
        if shortfall > 0:
            self.mint(sender, shortfall)
        return local.transfer(self.w3, self.token_address, from_key, to, units)

    def balance_of(self, owner: str) -> int:
        return local.balance_of(self.w3, self.token_address, owner)

    def transfer_request(self, to: str, units: int, sender: str | None = None) -> dict[str, str]:
        """An unsigned token transfer ({from, to, data}) for `reorg`: anvil signs it for its
        dev accounts (the payer by default)."""
        call = self.token.functions.transfer(Web3.to_checksum_address(to), int(units))
        return {
            "from": sender or self.payer,
            "to": self.token_address,
            "data": call._encode_transaction_data(),
        }

    def receipt(self, tx_hash: str):
        return self.w3.eth.get_transaction_receipt(tx_hash)

    # Blocks and time ------------------------------------------------------------------------

    def mine(self, blocks: int = 1) -> int:
        """Mine `blocks` empty blocks; the new head."""
        self.rpc("anvil_mine", [hex(blocks)])
        return self.head()

    def head(self) -> int:
        return self.w3.eth.block_number

    def block_hash(self, number: int) -> str:
        return HexBytes(self.w3.eth.get_block(number)["hash"]).to_0x_hex()

    def block_timestamp(self, number: int) -> int:
        return int(self.w3.eth.get_block(number)["timestamp"])

    def set_next_block_timestamp(self, timestamp: int) -> None:
        self.rpc("evm_setNextBlockTimestamp", [int(timestamp)])

    def increase_time(self, seconds: int) -> int:
        """Move the chain's clock forward (applies from the next block); the total offset."""
        offset = self.rpc("evm_increaseTime", [int(seconds)])
        return int(offset, 0) if isinstance(offset, str) else int(offset)

    # Snapshots and reorgs -----------------------------------------------------------------------

    def snapshot(self) -> str:
        """A snapshot id; `revert(id)` goes back to it once (evm_revert consumes the id)."""
        return self.rpc("evm_snapshot")

    def revert(self, snapshot_id: str) -> None:
        if not self.rpc("evm_revert", [snapshot_id]):
            raise ChainRpcError(f"evm_revert: no snapshot {snapshot_id}")

    def reorg(
        self, depth: int, transactions: Iterable[tuple[dict | str | bytes, int]] | None = None
    ) -> None:
        """Replace the last `depth` blocks with as many new ones (the head number stays).

        `transactions`: (transaction, block offset) pairs to include in the new blocks, offset
        0 being the first replaced block (head - depth + 1) and at most depth - 1. A transaction
        is an unsigned request ({from, to, data, ...}: anvil signs it for its dev accounts, see
        `transfer_request`) or a raw signed transaction (hex or bytes; its nonce must fit the
        chain as it was below the reorged blocks). Anvil's params: [depth, [[tx, offset], ...]].
        """
        pairs = [
            [HexBytes(tx).to_0x_hex() if isinstance(tx, bytes) else tx, int(offset)]
            for tx, offset in (transactions or ())
        ]
        self.rpc("anvil_reorg", [int(depth), pairs])


@pytest.fixture(scope="session")
def chain_session(anvil_process) -> LocalChain:
    return LocalChain(anvil_process)


@pytest.fixture
def chain(chain_session, settings) -> Iterator[LocalChain]:
    """The session's chain, as it was before the test once the test ends; the site's settings
    point at it for the test."""
    snapshot_id = chain_session.snapshot()
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": chain_session.rpc_url}
    settings.LOCAL_TOKEN_ADDRESS = chain_session.token_address
    try:
        yield chain_session
    finally:
        chain_session.revert(snapshot_id)


@pytest.fixture
def dead_rpc_url() -> str:
    """An RPC URL on 127.0.0.1 where nothing listens (a port just freed)."""
    return f"http://127.0.0.1:{free_port()}/"


@pytest.fixture
def private_chain(settings) -> Iterator[LocalChain]:
    """A chain of the test's own (a fresh anvil, stopped after the test), for reorganisations
    deeper than anvil's snapshots survive; the site's settings point at it for the test."""
    binary = anvil_binary()
    if binary is None:
        pytest.fail("anvil is not installed (node_modules/.bin/anvil): run `make install`.")
    with tempfile.TemporaryFile(mode="w+") as log:
        process, rpc_url = _start_anvil(binary, log)
        try:
            chain = LocalChain(rpc_url)
            settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": rpc_url}
            settings.LOCAL_TOKEN_ADDRESS = chain.token_address
            yield chain
        finally:
            _stop(process)
