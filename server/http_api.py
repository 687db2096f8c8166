CONTROLLERS: list = []
