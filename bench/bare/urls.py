from django.db import connection
from django.shortcuts import render
from django.urls import path


def bare(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        (value,) = cursor.fetchone()
    return render(request, "bare.html", {"value": value})


urlpatterns = [path("", bare)]
