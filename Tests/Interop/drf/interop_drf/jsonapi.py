"""The same catalog as a stock JSON:API (Django REST Framework JSON:API): resource objects with
`attributes` and `relationships`, `page[number]` pagination (50 a page, `links.next`,
`meta.pagination.count`, 404 past the last), related resources included on request
(`include=album,album.artist`: a compound document), `filter[field.lookup]` filters that answer 400 to a
filter the resource does not declare, and `sort=-year,title`. Nothing here is tailored to
StoreChain."""
from rest_framework import viewsets
from rest_framework_json_api import serializers
from rest_framework_json_api.django_filters import DjangoFilterBackend
from rest_framework_json_api.filters import OrderingFilter, QueryParameterValidationFilter
from rest_framework_json_api.pagination import JsonApiPageNumberPagination
from rest_framework_json_api.parsers import JSONParser
from rest_framework_json_api.renderers import JSONRenderer

from .models import Album, Artist, Track
from .views import NUMBER, TEXT


class ArtistSerializer(serializers.ModelSerializer):
    class Meta:
        model = Artist
        fields = ["name"]


class AlbumSerializer(serializers.ModelSerializer):
    included_serializers = {"artist": ArtistSerializer}

    class Meta:
        model = Album
        fields = ["title", "year", "artist"]


class TrackSerializer(serializers.ModelSerializer):
    included_serializers = {"album": AlbumSerializer}

    class Meta:
        model = Track
        fields = ["name", "composer", "milliseconds", "album"]


class JSONAPIViewSet(viewsets.ReadOnlyModelViewSet):
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]
    pagination_class = JsonApiPageNumberPagination
    filter_backends = [QueryParameterValidationFilter, OrderingFilter, DjangoFilterBackend]
    resource_name = None


class ArtistViewSet(JSONAPIViewSet):
    queryset = Artist.objects.order_by("id")
    serializer_class = ArtistSerializer
    resource_name = "artists"
    filterset_fields = {"id": ["exact", "in"], "name": TEXT}
    ordering_fields = ["id", "name"]


class AlbumViewSet(JSONAPIViewSet):
    queryset = Album.objects.order_by("id")
    serializer_class = AlbumSerializer
    resource_name = "albums"
    filterset_fields = {"id": ["exact", "in"], "title": TEXT, "year": NUMBER, "artist": ["exact", "in"]}
    ordering_fields = ["id", "title", "year"]


class TrackViewSet(JSONAPIViewSet):
    queryset = Track.objects.order_by("id")
    serializer_class = TrackSerializer
    resource_name = "tracks"
    filterset_fields = {"id": ["exact", "in"], "name": TEXT, "composer": ["exact", "isnull"],
                        "milliseconds": NUMBER, "album": ["exact", "in"]}
    ordering_fields = ["id", "name", "milliseconds"]
