"""OpenAPI links between operations, derived from path parameters by convention (a
postprocessing hook, so a new operation gets its links without anyone writing them).

A path parameter `{<name>_id}` takes the `id` of an object whose schema component is named
for it: `{order_id}` the `id` of an `Order`, `{payment_id}` of a `Payment`, `{endpoint_id}` of
an `Endpoint` or an `EndpointCreated` (the component's name in snake case is the name, or
starts with it, or ends with it). So every successful answer that carries such an object (a
creation, a detail, an action's answer, the first row of a list) links to every other
operation that takes its id; the operation's other path parameters come from the request's
own (`$request.path.<name>`). Generated clients and stateful fuzzers (schemathesis) follow
them: create an order, then read it, cancel it, pay it...
"""

import re

ID_SUFFIX = "_id"
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_METHODS = ("get", "post", "put", "patch", "delete")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def _component(schema: dict) -> str | None:
    ref = schema.get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else None


def _id_sources(response: dict, components: dict) -> list[tuple[str, str]]:
    """(component, JSON pointer of its id) for what a response's JSON body carries: the
    object itself, or the first of its `results`."""
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    found = []
    name = _component(schema)
    if name:
        properties = components.get(name, {}).get("properties", {})
        if "id" in properties:
            found.append((name, "/id"))
        results = properties.get("results", {})
        item = _component(results.get("items", {})) if results.get("type") == "array" else None
        if item and "id" in components.get(item, {}).get("properties", {}):
            found.append((item, "/results/0/id"))
    return found


def _names(component: str, parameter: str) -> bool:
    """Whether a component is the object a path parameter `<name>_id` names."""
    if not parameter.endswith(ID_SUFFIX):
        return False
    name, snake = parameter[: -len(ID_SUFFIX)], _snake(component)
    return snake == name or snake.startswith(name + "_") or snake.endswith("_" + name)


def _path_parameters(path: str) -> list[str]:
    return re.findall(r"{([^}]+)}", path)


def _operations(result: dict):
    for path, item in result.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                yield path, method, item[method]


def add_links(result, generator, request, public):
    """SPECTACULAR_SETTINGS POSTPROCESSING_HOOKS: links from each successful JSON answer to
    the operations that take the id of what it carries."""
    components = result.get("components", {}).get("schemas", {})
    targets = list(_operations(result))
    for path, _method, operation in targets:
        own = set(_path_parameters(path))
        for status, response in operation.get("responses", {}).items():
            if not status.startswith("2"):
                continue
            for component, pointer in _id_sources(response, components):
                links = {}
                for target_path, _target_method, target in targets:
                    if target is operation:
                        continue
                    parameters = {}
                    for name in _path_parameters(target_path):
                        if _names(component, name) and not parameters.get(name):
                            parameters[name] = f"$response.body#{pointer}"
                        elif name in own:
                            parameters[name] = f"$request.path.{name}"
                        else:
                            break
                    else:
                        if any(v.startswith("$response") for v in parameters.values()):
                            links[target["operationId"]] = {
                                "operationId": target["operationId"],
                                "parameters": parameters,
                                "description": f"The {component}'s id, from this answer.",
                            }
                if links:
                    response.setdefault("links", {}).update(links)
    return result
