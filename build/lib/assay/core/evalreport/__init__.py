"""The single-file HTML report of `assay eval` runs (`assay report RUN... -o report.html`)."""

from assay.core.evalreport.render import Rendered, build_html, render_html

__all__ = ["Rendered", "build_html", "render_html"]
