"""What a server's prompts and resources are, as the app keeps them: ``PromptInfo``, ``ResourceInfo``
(a resource, or a template with its RFC 6570 variables). Plain data, read by the server's status and
the commands built from them; listing and reading them is ``catalog.py``'s."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptArgumentInfo:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    """One prompt of one server, as ``prompts/list`` gave it (redacted)."""

    server: str
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgumentInfo, ...] = ()

    @property
    def command(self) -> str:
        return f"/{self.server}:{self.name}"


@dataclass(frozen=True)
class ResourceInfo:
    """One resource (``uri``) or resource template (``template``, RFC 6570) of one server."""

    server: str
    name: str
    uri: str = ""
    template: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None

    @property
    def is_template(self) -> bool:
        return bool(self.template)

    @property
    def variables(self) -> list[str]:
        """A template's variable names, in order (``{city}``, ``{+path}``, ``{?q,lang}``)."""
        names: list[str] = []
        for expression in _expressions(self.template):
            for part in expression.lstrip("+#./;?&").split(","):
                name = part.rstrip("*").split(":", 1)[0]
                if name and name not in names:
                    names.append(name)
        return names

    def expand(self, values: dict[str, str]) -> str:
        """The URI for these variable values (RFC 6570 simple, reserved and query forms)."""
        from urllib.parse import quote

        uri = self.template
        for expression in _expressions(self.template):
            operator = expression[0] if expression[0] in "+#./;?&" else ""
            names = [p.rstrip("*").split(":", 1)[0] for p in expression[len(operator) :].split(",")]
            if operator in ("?", "&"):
                pairs = [f"{n}={quote(values[n], safe='')}" for n in names if values.get(n)]
                text = (operator + "&".join(pairs)) if pairs else ""
            else:
                safe = "/:@!$&'()*+,;=?#[]" if operator in ("+", "#") else ""
                text = ",".join(quote(values.get(n, ""), safe=safe) for n in names)
                text = (operator if operator not in ("", "+") else "") + text if text else ""
            uri = uri.replace("{" + expression + "}", text, 1)
        return uri


def _expressions(template: str) -> list[str]:
    out, rest = [], template
    while "{" in rest and "}" in rest.split("{", 1)[1]:
        inner, rest = rest.split("{", 1)[1].split("}", 1)
        if inner:
            out.append(inner)
    return out
