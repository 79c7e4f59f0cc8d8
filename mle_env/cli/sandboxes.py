"""``mle-env image build`` and ``mle-env gc``: the docker sandbox's images, and what sandboxes of killed
processes left behind."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("image", help="build the agent image for the docker sandbox")
    image_sub = p.add_subparsers(dest="image_command", metavar="ACTION", required=True)
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

    folders = remove_stale_local_sandboxes(everything=args.all)
    print(f"removed {len(folders)} local sandbox folder(s)" + (f": {', '.join(folders)}" if folders else ""))
    try:
        removed = remove_stale_containers(everything=args.all)
    except PrerequisiteError as e:
        print(f"no containers checked: {e}")
        return 0
    print(f"removed {len(removed)} container(s)" + (f": {', '.join(removed)}" if removed else ""))
    return 0
