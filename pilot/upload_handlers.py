"""The report file of the order page's form, read with a limit: at most the report limit is
kept in memory, a larger file is skipped (flagged `too_large`), nothing is written to disk."""

import io

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile


class ReportFileUploadHandler(FileUploadHandler):
    """Keeps an uploaded file in memory up to `limit` bytes; past it, the rest is skipped and
    `too_large` set, so the view answers with the size message."""

    def __init__(self, request=None, *, limit: int):
        super().__init__(request)
        self.limit = limit
        self.too_large = False

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.buffer = io.BytesIO()

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            self.too_large = True
            raise SkipFile()
        self.buffer.write(raw_data)
        return None

    def file_complete(self, file_size):
        self.buffer.seek(0)
        return InMemoryUploadedFile(
            self.buffer,
            self.field_name,
            self.file_name,
            self.content_type,
            file_size,
            self.charset,
            self.content_type_extra,
        )
