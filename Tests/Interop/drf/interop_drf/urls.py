from django.urls import include, path
from rest_framework.routers import DefaultRouter

from . import jsonapi, odata
from .views import AlbumViewSet, ArtistViewSet, TrackViewSet

router = DefaultRouter()
router.register("artists", ArtistViewSet)
router.register("albums", AlbumViewSet)
router.register("tracks", TrackViewSet)
# The same catalog as JSON:API, under /jsonapi/.
jsonapi_router = DefaultRouter()
jsonapi_router.register("artists", jsonapi.ArtistViewSet, basename="jsonapi-artist")
jsonapi_router.register("albums", jsonapi.AlbumViewSet, basename="jsonapi-album")
jsonapi_router.register("tracks", jsonapi.TrackViewSet, basename="jsonapi-track")
# And as OData collections, under /odata/.
urlpatterns = router.urls + [
    path("jsonapi/", include(jsonapi_router.urls)),
    path("odata/Artists", odata.artists),
    path("odata/Albums", odata.albums),
    path("odata/Tracks", odata.tracks),
]
