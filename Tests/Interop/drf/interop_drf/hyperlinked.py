"""The same catalog as a hyperlinked Django REST Framework API (stock `HyperlinkedModelSerializer`,
as DRF's quickstart writes one): each record's relationships are the URLs of the related objects
(`"artist": "http://…/hyperlinked/artists/3/"`), with its own under `url`. Filters, ordering and
pagination as in views.py. Nothing here is tailored to StoreChain."""
from rest_framework import serializers

from . import views
from .models import Album, Artist, Track


def _detail(name):
    return {"view_name": f"hyperlinked-{name}-detail"}


class ArtistSerializer(serializers.HyperlinkedModelSerializer):
    class Meta:
        model = Artist
        fields = ["url", "id", "name"]
        extra_kwargs = {"url": _detail("artist")}


class AlbumSerializer(serializers.HyperlinkedModelSerializer):
    class Meta:
        model = Album
        fields = ["url", "id", "title", "year", "artist"]
        extra_kwargs = {"url": _detail("album"), "artist": _detail("artist")}


class TrackSerializer(serializers.HyperlinkedModelSerializer):
    class Meta:
        model = Track
        fields = ["url", "id", "name", "composer", "milliseconds", "album"]
        extra_kwargs = {"url": _detail("track"), "album": _detail("album")}


class ArtistViewSet(views.ArtistViewSet):
    serializer_class = ArtistSerializer


class AlbumViewSet(views.AlbumViewSet):
    serializer_class = AlbumSerializer


class TrackViewSet(views.TrackViewSet):
    serializer_class = TrackSerializer
