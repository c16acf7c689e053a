"""What a person sees on a page: its text, without markup, scripts or hidden inputs."""

from html.parser import HTMLParser


class _TextParser(HTMLParser):
    SKIPPED = {"script", "style", "template"}

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self._skipping += 1
        elif tag in ("input", "button") and dict(attrs).get("type") != "hidden":
            value = dict(attrs).get("value")
            if value:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIPPED and self._skipping:
            self._skipping -= 1

    def handle_data(self, data):
        if not self._skipping:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _TextParser()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())
