"""Every HTTP controller, for ``create_app``."""

from server.http_events import EventsController
from server.http_join import JoinSheetController
from server.http_sessions import SessionController, me

CONTROLLERS: list = [SessionController, EventsController, JoinSheetController, me]
