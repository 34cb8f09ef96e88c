from rest_framework import serializers, viewsets

from .models import Album, Artist, Track

TEXT = ["exact", "istartswith", "iendswith", "icontains", "startswith", "endswith", "contains"]
NUMBER = ["exact", "gte", "lte", "gt", "lt", "in", "isnull"]


class ArtistSerializer(serializers.ModelSerializer):
    class Meta:
        model = Artist
        fields = ["id", "name"]


class AlbumSerializer(serializers.ModelSerializer):
    class Meta:
        model = Album
        fields = ["id", "title", "year", "artist"]


class TrackSerializer(serializers.ModelSerializer):
    class Meta:
        model = Track
        fields = ["id", "name", "composer", "milliseconds", "album"]


class ArtistViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Artist.objects.order_by("id")
    serializer_class = ArtistSerializer
    filterset_fields = {"id": ["exact", "in"], "name": TEXT}
    ordering_fields = ["id", "name"]


class AlbumViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Album.objects.order_by("id")
    serializer_class = AlbumSerializer
    filterset_fields = {"id": ["exact", "in"], "title": TEXT, "year": NUMBER, "artist": ["exact", "in"]}
    ordering_fields = ["id", "title", "year"]


class TrackViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Track.objects.order_by("id")
    serializer_class = TrackSerializer
    filterset_fields = {"id": ["exact", "in"], "name": TEXT, "composer": ["exact", "isnull"],
                        "milliseconds": NUMBER, "album": ["exact", "in"]}
    ordering_fields = ["id", "name", "milliseconds"]
