from django.core.asgi import get_asgi_application

from config.startup import require_settings_module

require_settings_module()  # config.settings.production on a server, said explicitly

application = get_asgi_application()
