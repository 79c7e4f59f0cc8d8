"""``mle-env image build`` and ``mle-env gc``: the docker sandbox's images, and what sandboxes of killed
processes left behind."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("image", help="build the agent image for the docker sandbox")
    image_sub = p.add_subparsers(dest="image_command", metavar="ACTION")
    p.set_defaults(func=_print_help(p))  # `mle-env image` alone shows its actions, not a usage error
    b = image_sub.add_parser("build", help="build the agent image")
    b.add_argument("--gpu", action="store_true", help="build the CUDA image (Dockerfile.cuda)")
    b.add_argument("--offline", action="store_true",
                   help="no image registry: debootstrap a Debian root filesystem and docker import it")
    b.add_argument("--with-torch", action="store_true", help="--offline: add Debian's PyTorch (large)")
    b.add_argument("--tag", help="image tag (default mle-env-agent:cpu, or :cuda with --gpu)")
    b.add_argument("--if-needed", action="store_true",
                   help="do nothing when the tag exists and was built from the current recipe")
    b.set_defaults(func=cmd_image_build)

    p = sub.add_parser("gc", help="remove sandbox containers and local sandbox folders left behind by killed "
                                  "processes")
    p.add_argument("--all", action="store_true", help="remove every mle-env container and local sandbox of this "
                                                      "host, even those in use")
    p.set_defaults(func=cmd_gc)


def _print_help(parser: argparse.ArgumentParser):
    def show(args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    return show


def cmd_image_build(args: argparse.Namespace) -> int:
    from mle_env.sandbox.images import (
        DEFAULT_IMAGE,
        GPU_IMAGE,
        RECIPE_VERSION,
        build_image,
        build_offline_image,
        image_recipe,
    )

    tag = args.tag or (GPU_IMAGE if args.gpu else DEFAULT_IMAGE)
    if args.if_needed:
        recipe = image_recipe(tag)
        if recipe == RECIPE_VERSION:
            print(f"{tag} exists and is current (recipe {RECIPE_VERSION})")
            return 0
        if recipe is not None:
            print(f"{tag} was built from recipe {recipe or 'unknown'}; rebuilding it with recipe {RECIPE_VERSION}")
    if args.offline:
        if args.gpu:
            print("error: --offline builds a CPU image only (the CUDA stack needs a registry)")
            return 2
        built = build_offline_image(tag, with_torch=args.with_torch)
    else:
        built = build_image(gpu=args.gpu, tag=tag)
    print(f"built {built}")
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    from mle_env.errors import PrerequisiteError
    from mle_env.sandbox.docker import remove_stale_containers
    from mle_env.sandbox.local import remove_stale_local_sandboxes

    folders = remove_stale_local_sandboxes(everything=args.all) + remove_orphaned_local_folders()
    print(f"removed {len(folders)} local sandbox folder(s)" + (f": {', '.join(folders)}" if folders else ""))
    kept = _still_present(folders)
    if kept:  # what the kernel would not let go (a mount point inside, an immutable file): said, not hidden
        print(f"{len(kept)} of them could not be removed entirely (a mount point or an immutable file inside?); "
              f"a later `mle-env gc` tries again: {', '.join(kept)}")
    try:
        removed = remove_stale_containers(everything=args.all)
    except PrerequisiteError as e:
        print(f"no containers checked: {e}")
        return 0
    print(f"removed {len(removed)} container(s)" + (f": {', '.join(removed)}" if removed else ""))
    return 0


def remove_orphaned_local_folders() -> list[str]:
    """Remove what a local sandbox's removal that was cut short left without its owner file (releases before
    remove_tree removed that file first, then crashed deeper down); returns their folder names.

    Such a folder is told apart by its shape: named like a sandbox's folder (``mle-env-`` and mkdtemp's eight
    characters), this user's, with no owner file, a ``home`` folder and nothing but a sandbox's own folders.
    A running sandbox always has its owner file (written before ``home`` is made, removed after it is
    gone), and an unisolated sandbox's folder holds ``data``, ``code`` and the like at its top, never only these.
    """
    import os
    import re
    import tempfile
    from pathlib import Path

    from mle_env.sandbox.local import OWNER_FILE
    from mle_env.sandbox.tree_removal import remove_tree

    removed = []
    for base in Path(tempfile.gettempdir()).glob("mle-env-*"):
        try:
            st = base.lstat()
            names = set(os.listdir(base)) if base.is_dir() and not base.is_symlink() else set()
        except OSError:
            continue
        if (re.fullmatch(r"mle-env-[a-z0-9_]{8}", base.name) and st.st_uid == os.geteuid()
                and OWNER_FILE not in names and "home" in names and names <= _SANDBOX_PARTS):
            remove_tree(base)
            removed.append(base.name)
    return removed


_SANDBOX_PARTS = {"home", "tmp", "etc", "stage"}  # a local sandbox folder's entries besides its owner file


def _still_present(folders: list[str]) -> list[str]:
    """Those of the local sandbox folders just removed (names in the temporary folder) that are still there."""
    import tempfile
    from pathlib import Path

    return [str(Path(tempfile.gettempdir()) / name) for name in folders
            if (Path(tempfile.gettempdir()) / name).exists()]
