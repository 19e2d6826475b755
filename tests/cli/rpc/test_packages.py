"""RPC ``get_commands`` for a package pi installed: its prompt template and skill are listed
with the records pi 1.6.0 gives for the same tree (observed with ``PI_OFFLINE=1 pi --mode rpc``:
``source`` is the settings entry, ``origin`` is ``package``, ``baseDir`` the package folder)."""

from __future__ import annotations

import json

from .conftest import RpcWorld


def test_get_commands_lists_a_packages_template_and_skill_as_pi_does(rpc_world: RpcWorld) -> None:
    root = rpc_world.agent_dir / "npm" / "node_modules" / "@x" / "tools"
    (root / "prompts").mkdir(parents=True)
    (root / "skills" / "hello").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": "@x/tools", "version": "1.0.0"}))
    review = root / "prompts" / "review.md"
    review.write_text("---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1\n")
    skill = root / "skills" / "hello" / "SKILL.md"
    skill.write_text("---\nname: hello\ndescription: Say hello\n---\nSay hello.\n")
    rpc_world.write_settings({"packages": ["npm:@x/tools@1.0.0"]})
    rpc = rpc_world.spawn()
    rpc.send({"id": "1", "type": "get_commands"})
    reply = rpc.next()
    listed = [c for c in reply["data"]["commands"] if c["source"] != "extension"]
    origin = {"source": "npm:@x/tools@1.0.0", "scope": "user", "origin": "package"}
    assert listed == [
        {
            "name": "review",
            "description": "Review a file",
            "source": "prompt",
            "sourceInfo": {"path": str(review), **origin, "baseDir": str(root)},
        },
        {
            "name": "skill:hello",
            "description": "Say hello",
            "source": "skill",
            "sourceInfo": {"path": str(skill), **origin, "baseDir": str(root)},
        },
    ]
