"""Every HTTP controller, for ``create_app``."""

from conteur.server.web.asyncapi import asyncapi_document
from conteur.server.web.http_devices import DevicesController
from conteur.server.web.http_events import EventsController
from conteur.server.web.http_join import JoinSheetController
from conteur.server.web.http_sessions import SessionController, me

CONTROLLERS: list = [SessionController, EventsController, JoinSheetController, DevicesController, me, asyncapi_document]
