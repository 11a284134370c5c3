"""The speculative decoding a pick's launch command enables (plan/deploy.py): exactly the speculation the plan
assumed (plan/speculation.py, model/draft.py), in each engine's own flags for the scenario's release line
(hardware/engines.py), or a note beside the command where that release cannot run it.

Per engine and release line, a draft model (``spec_draft_params``, k = ``spec_tokens``) | the MTP module (n layers):

- vLLM 0.10+ (V1; 0.8-0.9 run as it): ``--speculative-config`` '{"method": "draft_model", "model": DRAFT,
  "num_speculative_tokens": k}' | '{"method": "deepseek_mtp", "num_speculative_tokens": n}'
- vLLM 0.6-0.7 (V0): ``--speculative-model DRAFT --num-speculative-tokens k`` | not generated (these flags take a
  separate draft checkpoint); vLLM at PP > 1: not generated (it does not speculate with pipeline parallelism)
- SGLang 0.5: ``--speculative-algorithm STANDALONE --speculative-draft-model-path DRAFT`` (not with attention
  data-parallel) | ``--speculative-algorithm EAGLE``; both a chain of ``--speculative-num-steps`` k (n),
  ``--speculative-eagle-topk 1``, ``--speculative-num-draft-tokens`` k + 1 (n + 1)
- SGLang 0.4: not generated (no draft-model algorithm) | as 0.5, with a note on early releases' NextN checkpoint
- TensorRT-LLM 1.x and 0.17 (PyTorch backend; 0.17 with a note): ``--extra_llm_api_options speculative.yaml``,
  the file written first: ``speculative_config`` with decoding_type Draft_Target, max_draft_len k,
  speculative_model_dir DRAFT | decoding_type MTP, num_nextn_predict_layers n
- TensorRT-LLM 0.14 (C++ runtime): not generated (speculation is built into the engines by trtllm-build)

Sources: vLLM docs "Speculative Decoding" (0.6.4: --speculative_model, --num_speculative_tokens; 0.8.2 on:
--speculative_config JSON; 0.7-0.10: "not compatible with pipeline parallelism", still failing in issues #49355 and
#57755) and "Draft Models" (method draft_model); vLLM 0.11-0.13 had no draft model on V1
(discuss.vllm.ai "Standalone draft model spec decode support in v0.x and v1"; issue #31883 on 0.13.0) until PR
#24322; vLLM's speculative.py accepts deepseek_mtp and, in later releases, warns that it is replaced by mtp. SGLang
docs "Speculative Decoding" (EAGLE/NEXTN for MTP, --speculative-eagle-topk 1 a chain, the MTP draft path filled from
the model; STANDALONE a smaller draft LLM, not with --enable-dp-attention), SGLang PR #10090 (STANDALONE, September
2025). TensorRT-LLM docs "Speculative Decoding" (MTPDecodingConfig num_nextn_predict_layers; Draft_Target with
max_draft_len and speculative_model, which accepts speculative_model_dir, 1.0's name) and
examples/draft_target_model (0.x: trtllm-build --speculative_decoding_mode draft_tokens_external).

A draft model the user named is only a parameter count, so the command names ``DRAFT_PATH`` and a comment line says
what to put there; the MTP module ships in the model's checkpoint and needs none. A pick that decodes plainly gets
nothing (the command byte for byte as without this module).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..common.text import counted
from ..results.plan import Pick
from ..scenario.scenario import Scenario

DRAFT_PATH = "<your-draft-model-path>"  # the placeholder the command names for a user's draft model
SPEC_FILE = "speculative.yaml"  # TensorRT-LLM's extra LLM API options file the command writes


@dataclass(frozen=True)
class SpecAsk:
    """The speculation a replica of the scenario runs when it speculates: the user's draft model of
    ``draft_params`` parameters proposing ``tokens`` a step, or (``draft_params`` None) the model's MTP module,
    one token per MTP layer. ``always``: every pick runs it (a named draft, or ``spec_mtp`` "on": model/draft.py
    ``replica_draft``); else only a pick whose ``speculation.runs`` says so (``spec_mtp`` "weigh")."""

    tokens: int
    draft_params: int | None = None
    always: bool = True

    @property
    def mtp(self) -> bool:
        return self.draft_params is None

    @classmethod
    def of(cls, sc: Scenario) -> SpecAsk | None:
        """The scenario's draft (model/draft.py ``draft_for``), or None where it has none or MTP is off."""
        a = sc.assumptions
        if a.spec_draft_params:
            return cls(a.spec_tokens, a.spec_draft_params)
        if a.spec_mtp == "off":
            return None
        layers = sc.model().mtp_layers
        return cls(layers, None, a.spec_mtp == "on") if layers else None


def speculates(spec: SpecAsk | None, pick: Pick) -> bool:
    """Whether the pick runs the scenario's speculation: as its weighing decided (``Pick.speculation``), else
    where every replica of the scenario speculates."""
    if spec is None:
        return False
    return pick.speculation.runs if pick.speculation is not None else spec.always


@dataclass(frozen=True)
class SpecFlags:
    """What the launch command adds for speculation: ``args`` after the engine's own, ``notes`` (comment lines
    above the command) and ``setup`` (shell lines run before it: TensorRT-LLM's options file)."""

    args: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()


NONE = SpecFlags()


def _draft_note(spec: SpecAsk) -> str:
    return (
        f"# {DRAFT_PATH}: your draft model's checkpoint, the {spec.draft_params / 1e9:g}B draft the plan assumed "
        f"proposing {spec.tokens} tokens a step (it must share the model's tokenizer)"
    )


def _what(spec: SpecAsk) -> str:
    if spec.mtp:
        return f"speculative decoding with the model's MTP module ({counted(spec.tokens, 'token')} a step)"
    return f"speculative decoding with a {spec.draft_params / 1e9:g}B draft model"


def _not_generated(spec: SpecAsk, why: str) -> SpecFlags:
    return SpecFlags(notes=(f"# not generated: {_what(spec)}, as the plan assumes: {why}",))


def vllm_spec(spec: SpecAsk, version: str | None, pp: int = 1) -> SpecFlags:
    """vLLM's flags: the 0.6-0.7 line's draft flags, or the V1 line's ``--speculative-config`` JSON; none with
    pipeline parallelism, which vLLM does not speculate under."""
    if pp > 1:
        return _not_generated(
            spec,
            "vLLM does not speculate with pipeline parallelism (its docs 0.7-0.10: 'not compatible with pipeline "
            "parallelism'; issues #14117, #49355, #57755 on later releases)",
        )
    if version == "0.6":
        if spec.mtp:
            return _not_generated(
                spec,
                "vLLM 0.6-0.7's --speculative-model names a separate draft checkpoint; the V1 line (0.10+) runs "
                'the module with --speculative-config \'{"method": "deepseek_mtp"}\'',
            )
        args = ("--speculative-model", DRAFT_PATH, "--num-speculative-tokens", str(spec.tokens))
        return SpecFlags(args, (_draft_note(spec),))
    if spec.mtp:
        config = {"method": "deepseek_mtp", "num_speculative_tokens": spec.tokens}
        return SpecFlags(("--speculative-config", json.dumps(config)))
    config = {"method": "draft_model", "model": DRAFT_PATH, "num_speculative_tokens": spec.tokens}
    release = (
        "# vLLM 0.11-0.13 refuse a draft model (V1 had none until PR #24322); earlier releases of the line run it "
        "on the V0 engine, later ones on V1"
    )
    return SpecFlags(("--speculative-config", json.dumps(config)), (_draft_note(spec), release))


def sglang_spec(spec: SpecAsk, version: str | None, dp_attention: bool) -> SpecFlags:
    """SGLang's flags: a chain of ``tokens`` steps (top-k 1), verifying ``tokens`` + 1 tokens a step."""
    chain = ("--speculative-num-steps", str(spec.tokens), "--speculative-eagle-topk", "1")
    chain += ("--speculative-num-draft-tokens", str(spec.tokens + 1))
    if spec.mtp:
        notes = ()
        if version == "0.4":
            notes = (
                "# early SGLang 0.4 releases read the MTP module from its own checkpoint: add "
                "--speculative-draft-model-path SGLang/DeepSeek-V3-NextN",
            )
        return SpecFlags(("--speculative-algorithm", "EAGLE", *chain), notes)
    if version == "0.4":
        return _not_generated(
            spec,
            "SGLang 0.4's algorithms (EAGLE, EAGLE3, NEXTN) need an EAGLE head or an MTP "
            "module; STANDALONE, a separate draft model, came with 0.5 (PR #10090)",
        )
    if dp_attention:
        return _not_generated(spec, "SGLang's STANDALONE draft does not run with --enable-dp-attention")
    args = ("--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", DRAFT_PATH, *chain)
    release = "# STANDALONE: SGLang 0.5 releases from September 2025 on (PR #10090)"
    return SpecFlags(args, (_draft_note(spec), release))


def trtllm_spec(spec: SpecAsk, version: str | None) -> SpecFlags:
    """TensorRT-LLM's PyTorch backend: a ``speculative_config`` in the extra LLM API options file the command
    writes first; the 0.x C++ runtime's speculation is built into its engines."""
    if version == "0.14":
        return _not_generated(
            spec,
            "TensorRT-LLM 0.x's C++ runtime builds speculation into the engines (trtllm-build "
            "--speculative_decoding_mode, --max_draft_len), not a trtllm-serve option",
        )
    if spec.mtp:
        config = ["  decoding_type: MTP", f"  num_nextn_predict_layers: {spec.tokens}"]
        notes: tuple[str, ...] = ()
    else:
        config = ["  decoding_type: Draft_Target", f"  max_draft_len: {spec.tokens}"]
        config.append(f"  speculative_model_dir: {DRAFT_PATH}")
        notes = (_draft_note(spec),)
    if version == "0.17":
        notes += (
            "# TensorRT-LLM 0.17-0.21's PyTorch backend (beta) gained speculative decoding within the line: "
            "check that your release's LLM API takes this speculative_config",
        )
    setup = (f"cat > {SPEC_FILE} <<'EOF'", "speculative_config:", *config, "EOF")
    return SpecFlags(("--extra_llm_api_options", SPEC_FILE), notes, setup)
