"""Request examples the schema shows for the resources' writes (valid on the demo catalogue
and the local test chain that `make run` sets up): documentation, and the first calls a
fuzzer tries."""

from drf_spectacular.utils import OpenApiExample

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 ada@laptop"
)

ORDER = [
    OpenApiExample(
        "Two H100 lots for a week",
        value={"gpu_model": "h100-80gb", "duration_days": 7, "lots": 2, "preparation": "pytorch"},
        request_only=True,
    ),
    OpenApiExample(
        "A custom preparation",
        value={
            "gpu_model": "mi300x-192gb",
            "duration_days": 3,
            "lots": 1,
            "preparation": "custom",
            "custom_preparation": "ROCm 6.2 and vLLM",
        },
        request_only=True,
    ),
]
STABLECOIN = [
    OpenApiExample(
        "USDC on the local test chain",
        value={"network": "local", "asset": "tUSDC"},
        request_only=True,
    ),
    OpenApiExample("USDC on Base", value={"network": "base", "asset": "USDC"}, request_only=True),
]
TOP_UP = [
    OpenApiExample(
        "50 USD in test USDC",
        value={"network": "local", "asset": "tUSDC", "amount": "50.00"},
        request_only=True,
    )
]
DECLARE = [
    OpenApiExample("Without the hash", value={}, request_only=True),
    OpenApiExample("With the hash", value={"tx_hash": "0x" + "ab" * 32}, request_only=True),
]
CANCEL = [OpenApiExample("Cancel", value={}, request_only=True)]
SSH_KEY_BODY = [
    OpenApiExample("A key", value={"ssh_public_key": SSH_KEY}, request_only=True),
]
ORDER_SSH_KEY = [
    OpenApiExample(
        "A key, also saved on the account",
        value={"ssh_public_key": SSH_KEY, "save_on_account": True},
        request_only=True,
    ),
]
DECISION = [
    OpenApiExample(
        "Launch",
        value={"kind": "launch", "motivation": "The pilot ran at the expected speed."},
        request_only=True,
    ),
]
