from django.urls import include, path
from rest_framework.routers import DefaultRouter

from . import hal, hyperlinked, jsonapi, odata
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
# And hyperlinked (relationships as URLs), under /hyperlinked/.
hyperlinked_router = DefaultRouter()
hyperlinked_router.register("artists", hyperlinked.ArtistViewSet, basename="hyperlinked-artist")
hyperlinked_router.register("albums", hyperlinked.AlbumViewSet, basename="hyperlinked-album")
hyperlinked_router.register("tracks", hyperlinked.TrackViewSet, basename="hyperlinked-track")
# And as HAL, under /hal/.
hal_router = DefaultRouter()
hal_router.register("artists", hal.ArtistViewSet, basename="hal-artist")
hal_router.register("albums", hal.AlbumViewSet, basename="hal-album")
hal_router.register("tracks", hal.TrackViewSet, basename="hal-track")
# And as OData collections, under /odata/.
urlpatterns = router.urls + [
    path("jsonapi/", include(jsonapi_router.urls)),
    path("hyperlinked/", include(hyperlinked_router.urls)),
    path("hal/", include(hal_router.urls)),
    path("odata/Artists", odata.artists),
    path("odata/Albums", odata.albums),
    path("odata/Tracks", odata.tracks),
]
