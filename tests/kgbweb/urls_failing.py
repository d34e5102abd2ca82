"""The site's URLs plus one view that fails, to see the 500 page a real failure gets (tests only)."""

from django.urls import path

from kgbweb.urls import urlpatterns as site_urlpatterns


def fail(request):
    raise RuntimeError("a failure no user should see the details of")


urlpatterns = [path("fail/", fail), *site_urlpatterns]
