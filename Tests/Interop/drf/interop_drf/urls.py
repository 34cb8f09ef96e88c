from rest_framework.routers import DefaultRouter

from .views import AlbumViewSet, ArtistViewSet, TrackViewSet

router = DefaultRouter()
router.register("artists", ArtistViewSet)
router.register("albums", AlbumViewSet)
router.register("tracks", TrackViewSet)
urlpatterns = router.urls
