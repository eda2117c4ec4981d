"""Search results page after page (Link: rel="next"), the way the product does NOT page its sweep: the tests that
show why the sweep pages by key (`GitHubClient.search_page` with a `created:>=` qualifier) need the naive way, and
the stand-in's own tests page its search. Test tooling only: the product has no caller for it."""
from __future__ import annotations

from collections.abc import Iterator


def search_issues(client, query: str, *, sort: str | None = "created", order: str = "asc",
                  limit: int | None = None) -> Iterator[dict]:
    params = {"q": query, "order": order}
    if sort is not None:
        params["sort"] = sort
    return client._paginate("/search/issues", params, limit=limit, items_key="items")
