from tests.payments.crypto_ui.conftest import local_network, top_up  # noqa: F401
