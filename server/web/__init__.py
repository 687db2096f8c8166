"""The fronts on the network: the Litestar app, its HTTP controllers, the websocket, the TLS door."""
