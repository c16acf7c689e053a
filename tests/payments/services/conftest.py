from tests.payments.crypto_ui.conftest import local_network, operator, top_up  # noqa: F401
