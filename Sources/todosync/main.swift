print("todosync")
