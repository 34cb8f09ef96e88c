from django.db import models


class Artist(models.Model):
    name = models.TextField()

    class Meta:
        managed = False
        db_table = "artists"


class Album(models.Model):
    title = models.TextField()
    year = models.IntegerField(null=True)
    artist = models.ForeignKey(Artist, on_delete=models.DO_NOTHING, related_name="albums")

    class Meta:
        managed = False
        db_table = "albums"


class Track(models.Model):
    name = models.TextField()
    composer = models.TextField(null=True)
    milliseconds = models.IntegerField()
    album = models.ForeignKey(Album, on_delete=models.DO_NOTHING, related_name="tracks")

    class Meta:
        managed = False
        db_table = "tracks"
