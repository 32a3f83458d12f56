"""The 2026-07-28 way a server says its prompts and resources changed: one ``subscriptions/listen``
stream per server (``CatalogStream``, a part of ``CatalogAccess``), whose events read the lists again
or count a subscribed resource's update, as the 2025-11-25 notifications do."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from mcp_chat_tui.servers.client_context import is_modern

if TYPE_CHECKING:
    from mcp import Client

    from mcp_chat_tui.servers.runtime import ServerRuntime

log = logging.getLogger(__name__)


class CatalogStream:
    """Starts and follows the stream; what its events do is ``CatalogAccess``'s."""

    def _catalog_changed(self, runtime: ServerRuntime, client: Client) -> None:  # provided by CatalogAccess
        raise NotImplementedError

    def _resource_updated(self, runtime: ServerRuntime, uri: str) -> None:  # provided by CatalogAccess
        raise NotImplementedError

    def _watch_catalog(self, runtime: ServerRuntime, client: Client) -> asyncio.Future[None] | None:
        """On 2026-07-28: a ``subscriptions/listen`` stream for prompt and resource changes (and the
        subscribed resources); a new one replaces the old. Returns a future done once the server
        acknowledged it (or the stream failed)."""
        if not is_modern(client):
            return None
        capabilities = client.server_capabilities
        prompts = bool(capabilities.prompts and capabilities.prompts.list_changed)
        resources = bool(capabilities.resources and capabilities.resources.list_changed)
        if runtime.catalog_task is not None:
            runtime.catalog_task.cancel()
        if not (prompts or resources or runtime.status.subscribed):
            return None
        loop = asyncio.get_running_loop()
        acked: asyncio.Future[None] = loop.create_future()
        runtime.catalog_task = loop.create_task(
            self._listen_for_catalog(runtime, client, prompts, resources, sorted(runtime.status.subscribed), acked)
        )
        return acked

    async def _listen_for_catalog(
        self,
        runtime: ServerRuntime,
        client: Client,
        prompts: bool,
        resources: bool,
        uris: list[str],
        acked: asyncio.Future[None],
    ) -> None:
        from mcp.client.subscriptions import ResourceUpdated

        try:
            async with client.listen(
                prompts_list_changed=prompts, resources_list_changed=resources, resource_subscriptions=uris
            ) as subscription:
                acked.set_result(None)
                async for event in subscription:
                    if isinstance(event, ResourceUpdated):
                        self._resource_updated(runtime, event.uri)
                    else:
                        self._catalog_changed(runtime, client)
        except Exception as exc:  # noqa: BLE001 - losing the stream only loses live updates
            log.info("prompt and resource stream of %s ended: %s", runtime.config.name, exc)
        finally:
            if not acked.done():
                acked.set_result(None)
