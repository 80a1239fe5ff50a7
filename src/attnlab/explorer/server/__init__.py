"""The explorer's local server for typed sentences: what it computes and refuses (``app``),
its connection lobby and capped reads (``connections``), what a request carries read strictly
(``fields``) and the HTTP side (``httpd``)."""
