"""The same catalog as HAL (drf-hal-json, a stock HAL renderer for Django REST Framework): each
record's relationships and its own URL under `_links` (`"_links": {"self": "…/hal/albums/5/",
"artist": "…/hal/artists/3/"}`), a page's records under `_embedded`, its next page at
`_links.next` and the listing's size at `count`, served as `application/hal+json`. Filters and
ordering as in views.py. Nothing here is tailored to StoreChain."""
from drf_hal_json.pagination import HalPageNumberPagination
from drf_hal_json.renderers import JsonHalRenderer
from drf_hal_json.serializers import HalModelSerializer

from . import views
from .models import Album, Artist, Track


def _detail(name):
    return {"view_name": f"hal-{name}-detail"}


class ArtistSerializer(HalModelSerializer):
    class Meta:
        model = Artist
        fields = ["url", "id", "name"]
        extra_kwargs = {"url": _detail("artist")}


class AlbumSerializer(HalModelSerializer):
    class Meta:
        model = Album
        fields = ["url", "id", "title", "year", "artist"]
        extra_kwargs = {"url": _detail("album"), "artist": _detail("artist")}


class TrackSerializer(HalModelSerializer):
    class Meta:
        model = Track
        fields = ["url", "id", "name", "composer", "milliseconds", "album"]
        extra_kwargs = {"url": _detail("track"), "album": _detail("album")}


class HAL:
    renderer_classes = [JsonHalRenderer]
    pagination_class = HalPageNumberPagination


class ArtistViewSet(HAL, views.ArtistViewSet):
    serializer_class = ArtistSerializer


class AlbumViewSet(HAL, views.AlbumViewSet):
    serializer_class = AlbumSerializer


class TrackViewSet(HAL, views.TrackViewSet):
    serializer_class = TrackSerializer
