"""``mle-env view``: a web viewer for what mle-env writes (a run folder of ``mle-env eval``, a folder of
episode folders, one episode's folder, a trajectory file or an AIDE journal).

- :mod:`.index` reads those files, read-only, and builds the page data, each piece under a key of its own;
- :mod:`.server` serves the app's static files and that data on 127.0.0.1 (``http.server``);
- :mod:`.bundle` writes the same app and data as static files (``--bundle``) that open from ``file://``.

The page (``static/``: one HTML page, one script, one style sheet; no build step, nothing from elsewhere)
loads each piece of data by adding ``<script src="data/KEY.js">``, whose content is
``mleView.receive("KEY", JSON)``; the server generates those files on request, the bundle writes them.
Every text the agent controls is cleaned of terminal escape sequences here and shown as text only there.
"""
