"""The same catalog as an OData v4 service's collections: `$filter` parsed and applied by
odata-query (a third-party OData filter parser for Django: `eq ne gt ge lt le in`, `and`, `or`,
`not`, `contains`, `startswith`, `endswith`, `tolower`, `null`), `$orderby` (`milliseconds
desc,id`), `$top`, `$skip`, `$count=true` (`@odata.count`) and server-driven paging: at most 50
records an answer, the rest behind `@odata.nextLink`, as OData's URL conventions describe them.
The records are in `value`. A query the parser cannot read is answered 400 with OData's error
body. Only the paging and ordering here are written for this suite; the filter semantics are the
library's."""
from urllib.parse import urlencode

from django.db.models import F
from django.http import JsonResponse
from odata_query.django import apply_odata_query
from odata_query.exceptions import ODataException

from .models import Album, Artist, Track

PAGE = 50


def _error(message):
    return JsonResponse({"error": {"code": "BadRequest", "message": message}}, status=400)


def collection(model, fields):
    def view(request):
        query = request.GET
        rows = model.objects.all()
        try:
            if query.get("$filter"):
                rows = apply_odata_query(rows, query["$filter"])
            skip = int(query.get("$skip", "0"))
            top = int(query["$top"]) if "$top" in query else None
        except (ODataException, ValueError) as error:
            return _error(str(error))
        order = []
        for item in filter(None, (part.strip() for part in query.get("$orderby", "").split(","))):
            name, _, direction = item.partition(" ")
            if name not in fields or direction.strip() not in ("", "asc", "desc"):
                return _error(f"cannot order by '{item}'")
            order.append(F(name).desc() if direction.strip() == "desc" else F(name).asc())
        rows = rows.order_by(*order) if order else rows.order_by("id")
        body = {}
        if query.get("$count") == "true":
            body["@odata.count"] = rows.count()
        size = PAGE if top is None else min(top, PAGE)
        page = list(rows[skip:skip + size].values(*fields))
        body["value"] = page
        # More than one answer holds: the next one is behind a link (what is left of $top).
        left = None if top is None else top - len(page)
        if len(page) == size and (left is None or left > 0) and rows[skip + size:skip + size + 1].exists():
            following = {key: value for key, value in query.items() if key not in ("$skip", "$top")}
            following["$skip"] = str(skip + size)
            if left is not None:
                following["$top"] = str(left)
            body["@odata.nextLink"] = request.build_absolute_uri(request.path) + "?" + urlencode(following)
        return JsonResponse(body)

    return view


artists = collection(Artist, ["id", "name"])
albums = collection(Album, ["id", "title", "year", "artist"])
tracks = collection(Track, ["id", "name", "composer", "milliseconds", "album"])
