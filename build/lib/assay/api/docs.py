"""The interactive API docs at /api/docs: Swagger UI from the bundled swagger-ui-bundle
package (no CDN, works offline), on a page of our own rather than flask-smorest's, whose
bootstrap is an inline script. Here it is a file, so the page's policy allows scripts and
styles from this origin only ('unsafe-inline' for neither: Swagger UI 4 sets its styles
through the DOM, which the policy allows; checked in Chromium, browsing, "Try it out"), and
images from data: URIs besides, which its stylesheet draws its icons with."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory
from flask.typing import ResponseReturnValue
from swagger_ui_bundle import swagger_ui_path

blp = Blueprint("docs", __name__, url_prefix="/api/docs")
ASSETS = "/api/docs/assets/"
SPEC_URL = "/api/openapi.json"

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; "
       "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Assay API</title>
<link rel="stylesheet" href="{ASSETS}swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{ASSETS}swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
"""

# validatorUrl null: the default badge is an image from validator.swagger.io.
INIT = f"""window.ui = SwaggerUIBundle({{
  url: "{SPEC_URL}", dom_id: "#swagger-ui", validatorUrl: null
}});
"""


@blp.get("")
def page() -> ResponseReturnValue:
    response = Response(PAGE, mimetype="text/html")
    response.headers["Content-Security-Policy"] = CSP
    return response


@blp.get("/init.js")
def init() -> ResponseReturnValue:
    return Response(INIT, mimetype="text/javascript")


@blp.get("/assets/<path:filename>")
def assets(filename: str) -> ResponseReturnValue:
    return send_from_directory(swagger_ui_path, filename)
