from django.core.wsgi import get_wsgi_application

from config.startup import require_settings_module

require_settings_module()  # config.settings.production on a server, said explicitly

application = get_wsgi_application()
