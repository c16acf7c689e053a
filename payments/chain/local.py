"""The local development chain (anvil) and its test stablecoin: deploy, mint, transfer.

Development and test tooling only: the site itself never signs a transaction. The two keys below
are anvil's well-known dev accounts, derived from the public test mnemonic ("test test ... junk").
TEST ONLY: everyone knows them; they hold value only on a local dev chain, never anywhere else.
"""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from eth_account.signers.local import LocalAccount
from web3 import HTTPProvider, Web3
from web3.contract import Contract

ARTIFACTS_DIR = Path(__file__).resolve().parents[2] / "contracts" / "build"

# TEST ONLY — anvil account 0 (0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266): deploys the token.
DEPLOYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
# TEST ONLY — anvil account 1 (0x70997970C51812dc3A010C7d01b50e0d17dc79C8): the demo payer.
PAYER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"

RECEIPT_TIMEOUT_SECONDS = 60


class LocalChainError(Exception):
    """The local chain tooling could not do what was asked (missing build, failed transaction)."""


def web3_for(rpc_url: str) -> Web3:
    return Web3(
        HTTPProvider(rpc_url, request_kwargs={"timeout": settings.PAYMENT_RPC_TIMEOUT_SECONDS})
    )


def load_artifact(name: str = "TestStablecoin") -> dict[str, Any]:
    """The compiled contract ({contractName, compiler, abi, bytecode}) from contracts/build/."""
    path = ARTIFACTS_DIR / f"{name}.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise LocalChainError(
            f"{path} is missing: compile the contracts with `node contracts/build.mjs` "
            "(or `make install`)."
        ) from None


def account(w3: Web3, key: str) -> LocalAccount:
    return w3.eth.account.from_key(key)


def address_of(key: str) -> str:
    return Web3().eth.account.from_key(key).address


def token_contract(w3: Web3, address: str) -> Contract:
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=load_artifact()["abi"])


def _fees(w3: Web3) -> dict[str, int]:
    """EIP-1559 fees from the node: a tip, and a cap of twice the base fee plus the tip."""
    tip = w3.eth.max_priority_fee
    base_fee = w3.eth.get_block("latest").get("baseFeePerGas", 0)
    return {"maxPriorityFeePerGas": tip, "maxFeePerGas": 2 * base_fee + tip}


def send(w3: Web3, key: str, tx: dict[str, Any]):
    """Sign a transaction with `key`, send it and wait for its receipt; raise if it failed."""
    sender = account(w3, key)
    tx = {
        "from": sender.address,
        "chainId": w3.eth.chain_id,
        "nonce": w3.eth.get_transaction_count(sender.address, "pending"),
        "value": 0,
        **_fees(w3),
        **tx,
    }
    if "gas" not in tx:
        tx["gas"] = w3.eth.estimate_gas(tx) * 12 // 10  # a fifth more, for safety
    signed = sender.sign_transaction(tx)
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=RECEIPT_TIMEOUT_SECONDS)
    if receipt["status"] != 1:
        raise LocalChainError(f"transaction {tx_hash.to_0x_hex()} failed (status 0)")
    return receipt


def deploy_token_receipt(w3: Web3, key: str = DEPLOYER_KEY):
    """Deploy a fresh TestStablecoin; the receipt (contractAddress, blockNumber, ...)."""
    artifact = load_artifact()
    factory = w3.eth.contract(abi=artifact["abi"], bytecode=artifact["bytecode"])
    tx = factory.constructor().build_transaction({"from": account(w3, key).address})
    receipt = send(w3, key, {"data": tx["data"]})
    if not receipt["contractAddress"]:
        raise LocalChainError("the deployment receipt has no contract address")
    return receipt


def deploy_token(w3: Web3, key: str = DEPLOYER_KEY) -> str:
    """Deploy a fresh TestStablecoin; its checksummed address."""
    return Web3.to_checksum_address(deploy_token_receipt(w3, key)["contractAddress"])


def has_code(w3: Web3, address: str) -> bool:
    return len(w3.eth.get_code(Web3.to_checksum_address(address))) > 0


def _call_token(w3: Web3, key: str, function) -> str:
    """Send one call of a token function as a signed transaction; the tx hash (0x hex)."""
    tx = function.build_transaction({"from": account(w3, key).address})
    receipt = send(w3, key, {"to": tx["to"], "data": tx["data"]})
    return receipt["transactionHash"].to_0x_hex()


def mint(w3: Web3, token_address: str, to: str, units: int, key: str = DEPLOYER_KEY) -> str:
    """Mint `units` base units of the test token to `to` (anyone may mint); the tx hash."""
    token = token_contract(w3, token_address)
    return _call_token(w3, key, token.functions.mint(Web3.to_checksum_address(to), int(units)))


def transfer(w3: Web3, token_address: str, from_key: str, to: str, units: int) -> str:
    """An ERC-20 transfer of `units` base units from the key's account to `to`; the tx hash."""
    token = token_contract(w3, token_address)
    return _call_token(
        w3, from_key, token.functions.transfer(Web3.to_checksum_address(to), int(units))
    )


def balance_of(w3: Web3, token_address: str, owner: str) -> int:
    token = token_contract(w3, token_address)
    return token.functions.balanceOf(Web3.to_checksum_address(owner)).call()


def read_local_chain_file() -> dict[str, Any] | None:
    """What local_chain_setup wrote (rpc_url, chain_id, token_address, deployed_at_block)."""
    try:
        data = json.loads(Path(settings.LOCAL_CHAIN_FILE).read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # unreadable: treated as absent, the next setup rewrites it
    return data if isinstance(data, dict) else None


def write_local_chain_file(data: dict[str, Any]) -> None:
    path = Path(settings.LOCAL_CHAIN_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    temporary.replace(path)


def running_chain_url() -> str:
    """The RPC URL of the local chain that is running: RPC_URL_LOCAL when set, else the one
    `make run`'s chain recorded in LOCAL_CHAIN_FILE (local_chain_setup writes it once anvil
    answers), so that `make pay` needs no ANVIL_PORT repeated. LocalChainError, saying what to
    do, when no chain is known or none answers there."""
    rpc_url = settings.PAYMENT_RPC_URLS.get("local")
    source = "RPC_URL_LOCAL"
    if not rpc_url:
        rpc_url = (read_local_chain_file() or {}).get("rpc_url")
        source = str(settings.LOCAL_CHAIN_FILE)
    if not rpc_url:
        raise LocalChainError(
            f"No local chain is known: neither RPC_URL_LOCAL nor {settings.LOCAL_CHAIN_FILE} "
            "names one. Start `make run` (it starts the chain) and try again."
        )
    try:
        web3_for(rpc_url).eth.chain_id  # noqa: B018 - the cheapest call that needs an answer
    except Exception as exc:  # noqa: BLE001 - refused, timed out, not JSON-RPC: all say the same
        raise LocalChainError(
            f"No local chain answers at {rpc_url} (from {source}): is `make run` running? "
            f"({type(exc).__name__})"
        ) from None
    return rpc_url
