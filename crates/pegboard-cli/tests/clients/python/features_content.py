"""Features about what the server offers: tools, resources (and the URIs in tool results),
prompts, completions. Each returns (value, detail) and raises on failure."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from matrix_base import (
    BLOB_TEMPLATE, DOC_URI, EXPECTED_PROMPTS, EXPECTED_TOOLS, TEXT_TEMPLATE, MatrixBase, expect, texts,
)


class ContentFeatures(MatrixBase):
    async def f_connect(self) -> tuple[Any, Any]:
        info = self.c.server_info
        return None, {"protocol_version": self.c.protocol_version, "server": info and info.name}

    async def f_tools_list(self) -> tuple[Any, Any]:
        tools, cursor = [], None
        while True:
            page = await self.c.list_tools(cursor=cursor)
            tools += page.tools
            if not (cursor := page.next_cursor):
                break
        self.tools = {self.naming.decode_name(t.name): t for t in tools}
        missing = [n for n in EXPECTED_TOOLS if n not in self.tools]
        expect(not missing, f"{len(tools)} tools, missing {missing}")
        value = {n: {"title": t.title, "description": t.description,
                     "inputSchema": t.input_schema, "outputSchema": t.output_schema,
                     "annotations": t.annotations and t.annotations.model_dump(exclude_none=True)}
                 for n, t in sorted(self.tools.items())}
        execution = {n: t.execution.task_support for n, t in self.tools.items() if t.execution}
        return value, {"count": len(tools), "execution": execution}

    async def f_echo(self) -> tuple[Any, Any]:
        result = await self.call("echo", {"message": "pegboard"})
        expect(texts(result) == ["Echo: pegboard"], f"echo answered {texts(result)}")
        return texts(result), None

    async def f_resources_list(self) -> tuple[Any, Any]:
        items, cursor = [], None
        while True:
            page = await self.c.list_resources(cursor=cursor)
            items += page.resources
            if not (cursor := page.next_cursor):
                break
        value = sorted([self.naming.decode_uri(str(r.uri)), r.name, r.mime_type] for r in items)
        expect(any(v[0] == DOC_URI for v in value), f"{DOC_URI} not listed")
        return value, {"count": len(items)}

    async def f_resource_templates(self) -> tuple[Any, Any]:
        page = await self.c.list_resource_templates()
        value = sorted([self.naming.decode_uri(t.uri_template), t.name, t.mime_type]
                       for t in page.resource_templates)
        listed = [v[0] for v in value]
        expect(TEXT_TEMPLATE in listed and BLOB_TEMPLATE in listed, f"templates listed: {listed}")
        return value, None

    async def read(self, original_uri: str) -> types.ReadResourceResult:
        shown = self.naming.uri(original_uri)
        result = await self.c.read_resource(shown)
        expect(result.contents, f"{shown}: no contents")
        expect(str(result.contents[0].uri) == shown, f"read {shown}, contents name {result.contents[0].uri}")
        return result

    async def f_resource_read(self) -> tuple[Any, Any]:
        doc = (await self.read(DOC_URI)).contents[0]
        expect(isinstance(doc, types.TextResourceContents) and doc.text, "architecture.md has no text")
        dyn = (await self.read("demo://resource/dynamic/text/7")).contents[0]
        expect(isinstance(dyn, types.TextResourceContents), "dynamic text resource is not text")
        head = dyn.text.split(" created at ")[0]
        expect(head == "Resource 7: This is a plaintext resource", f"template read gave {dyn.text!r}")
        return {"doc": [doc.mime_type, len(doc.text)], "template": head}, None

    async def f_resource_links(self) -> tuple[Any, Any]:
        result = await self.call("get-resource-links", {"count": 2})
        links = [b for b in result.content if isinstance(b, types.ResourceLink)]
        expect(len(links) == 2, f"{len(links)} resource links")
        value = []
        for link in links:
            original = self.naming.decode_uri(str(link.uri))
            contents = (await self.read(original)).contents[0]
            value.append([original, link.name, link.mime_type, type(contents).__name__])
        return value, None

    async def f_embedded_resource(self) -> tuple[Any, Any]:
        result = await self.call("get-resource-reference", {"resourceType": "Text", "resourceId": 3})
        embedded = [b for b in result.content if isinstance(b, types.EmbeddedResource)]
        expect(len(embedded) == 1, f"{len(embedded)} embedded resources")
        original = self.naming.decode_uri(str(embedded[0].resource.uri))
        expect(original == "demo://resource/dynamic/text/3", f"embedded {original}")
        await self.read(original)
        return original, None

    async def f_session_resource_link(self) -> tuple[Any, Any]:
        import base64
        import gzip

        payload = "pegboard matrix payload"
        data = "data:text/plain;base64," + base64.b64encode(payload.encode()).decode()
        result = await self.call("gzip-file-as-resource", {"name": "matrix.txt.gz", "data": data})
        links = [b for b in result.content if isinstance(b, types.ResourceLink)]
        expect(len(links) == 1, f"{len(links)} resource links")
        original = self.naming.decode_uri(str(links[0].uri))
        blob = (await self.read(original)).contents[0]
        expect(isinstance(blob, types.BlobResourceContents), "session resource is not a blob")
        text = gzip.decompress(base64.b64decode(blob.blob)).decode()
        expect(text == payload, f"gunzipped {text!r}")
        return [original, text], None

    async def f_prompts_list(self) -> tuple[Any, Any]:
        page = await self.c.list_prompts()
        value = sorted([self.naming.decode_name(p.name), sorted([a.name, bool(a.required)] for a in p.arguments or [])]
                       for p in page.prompts)
        names = [v[0] for v in value]
        expect(all(p in names for p in EXPECTED_PROMPTS), f"prompts: {names}")
        return value, None

    async def f_prompt_get(self) -> tuple[Any, Any]:
        result = await self.c.get_prompt(self.naming.name("args-prompt"), {"city": "Paris", "state": "Texas"})
        value = [[m.role, getattr(m.content, "text", None)] for m in result.messages]
        expect(value == [["user", "What's weather in Paris, Texas?"]], f"messages {value}")
        return value, None

    async def f_prompt_embedded_resource(self) -> tuple[Any, Any]:
        result = await self.c.get_prompt(self.naming.name("resource-prompt"), {"resourceType": "Text", "resourceId": "2"})
        embedded = [m.content for m in result.messages if isinstance(m.content, types.EmbeddedResource)]
        expect(len(embedded) == 1, f"{len(embedded)} embedded resources in {len(result.messages)} messages")
        original = self.naming.decode_uri(str(embedded[0].resource.uri))
        expect(original == "demo://resource/dynamic/text/2", f"embedded {original}")
        await self.read(original)
        return original, None

    async def f_complete_prompt(self) -> tuple[Any, Any]:
        ref = types.PromptReference(name=self.naming.name("completable-prompt"))
        dept = await self.c.complete(ref, {"name": "department", "value": "En"})
        people = await self.c.complete(ref, {"name": "name", "value": ""}, {"department": "Engineering"})
        value = [dept.completion.values, people.completion.values]
        expect(value == [["Engineering"], ["Alice", "Bob", "Charlie"]], f"completions {value}")
        return value, None

    async def f_complete_resource_template(self) -> tuple[Any, Any]:
        ref = types.ResourceTemplateReference(uri=self.naming.uri(TEXT_TEMPLATE))
        result = await self.c.complete(ref, {"name": "resourceId", "value": "42"})
        expect(result.completion.values == ["42"], f"completions {result.completion.values}")
        return result.completion.values, None
