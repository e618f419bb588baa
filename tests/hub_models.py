"""Every attention-bearing keras-hub 0.32 backbone, built tiny from a config, with inputs.

A test support module (tests/ is on pytest's pythonpath): `tests/heads/test_inspection_hub.py`
inspects each of `MODELS` and checks one head of each attention family against a float64
recomputation. `UNBUILT` lists the attention-bearing backbones that cannot be built from a config
here, with the reason; backbones without attention (the convolutional ones, FNet's Fourier
mixing, RWKV-7's recurrence) are not listed.

Sizes are the smallest the configs accept (1-2 layers, 1-4 heads, 8-16 features, 6 tokens,
16-32 pixel images), so that every one builds and runs in a fraction of a second. Random
weights from a fixed seed; nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

VOCABULARY, TOKENS, BATCH = 40, 6, 2
PADDING = np.array([[1] * (TOKENS - 2) + [0, 0], [1] * TOKENS], dtype="int32")  # (B, T)
IMAGE = (16, 16, 3)


@dataclass(frozen=True)
class HubModel:
    """One tiny keras-hub backbone and what `inspect` must read from it."""

    name: str  # the backbone class is `keras_hub.models.<name>Backbone`
    config: dict | Callable[[Any], Any]  # its arguments, or keras_hub.models -> the backbone
    calls: int  # attention calls in one run
    heads: tuple[int, ...]  # the distinct head counts of those calls, ascending
    position: str = "none"  # position schemes read, "/"-joined, in order of first appearance
    inputs: Callable[[Any], Any] | None = None  # backbone -> inputs (default: `model_inputs`)
    warnings: int = 0  # what inspect names as unreadable (D-Fine's deformable attention)
    weighted: int = 0  # calls checked against their weighted values A·V, not an output
    # projection (the layer has none, or splits A·V before projecting; README's table says so)

    def build(self, models: Any) -> Any:
        """The backbone, with random weights, from `keras_hub.models`."""
        if callable(self.config):
            return self.config(models)
        return getattr(models, f"{self.name}Backbone")(**self.config)


def model_inputs(backbone: Any, vocabulary: int = VOCABULARY) -> Any:
    """Inputs for every `backbone.inputs` entry: token ids (below `vocabulary`), a padding mask
    whose first sequence ends with two padded tokens, zero segment ids, and random floats for
    images or features; a single input is given as an array."""
    rng = np.random.default_rng(0)
    data = {}
    for spec in backbone.inputs:
        shape = (BATCH, *[TOKENS if d is None else d for d in spec.shape[1:]])
        if "mask" in spec.name and shape == (BATCH, TOKENS):
            data[spec.name] = PADDING.astype(spec.dtype)
        elif "segment" in spec.name:
            data[spec.name] = np.zeros(shape, spec.dtype)
        elif "int" in spec.dtype:
            data[spec.name] = rng.integers(1, vocabulary, size=shape).astype(spec.dtype)
        else:
            data[spec.name] = rng.random(shape).astype(spec.dtype)
    keyed = isinstance(getattr(backbone, "_inputs_struct", None), dict)  # built on a dict
    return next(iter(data.values())) if len(data) == 1 and not keyed else data


# fmt: off
TEXT = dict(vocabulary_size=VOCABULARY, num_layers=2, hidden_dim=8, intermediate_dim=16)
VISION = dict(patch_size=4, num_layers=2, num_heads=2, hidden_dim=8)
EXPERTS = dict(moe_intermediate_dim=8, num_experts=4, top_k=2)
ELECTRA = dict(vocab_size=VOCABULARY, num_layers=2, num_heads=2, hidden_dim=8, embedding_dim=8,
               intermediate_dim=16, max_sequence_length=12)
WHISPER = dict(**TEXT, num_heads=2, num_mels=8, max_encoder_sequence_length=16,
               max_decoder_sequence_length=12)
EDREC = dict(vocab_size=VOCABULARY, num_layers_enc=1, num_layers_dec=1, hidden_dim=8,
             intermediate_dim=16, num_heads=2)
MOONSHINE = dict(vocabulary_size=VOCABULARY, filter_dim=16, encoder_num_layers=1,
                 decoder_num_layers=1, hidden_dim=16, intermediate_dim=16, encoder_num_heads=2,
                 decoder_num_heads=2)
SWIN = dict(image_shape=(16, 16, 3), embed_dim=8, depths=(2, 2), num_heads=(2, 4), window_size=4,
            patch_size=2)
VITDET = dict(hidden_size=8, num_layers=2, intermediate_dim=16, num_heads=2,
              global_attention_layer_indices=[1], image_shape=(32, 32, 3), patch_size=4,
              num_output_channels=8, window_size=4)
PRISM = dict(num_frames=2, patch_size=4, hidden_dim=8, intermediate_dim=16, num_heads=2,
             num_spatial_layers=1, num_temporal_layers=1, num_auxiliary_layers=0,
             image_shape=IMAGE)
FLUX = dict(input_channels=8, hidden_size=16, mlp_ratio=2.0, num_heads=2, depth=1,
            depth_single_blocks=1, axes_dim=[2, 2, 4], theta=10000, use_bias=True,
            guidance_embed=True, image_shape=(4, 8), text_shape=(4, 8), image_ids_shape=(4, 3),
            text_ids_shape=(4, 3), y_shape=(8,))
GROUPED = dict(vocabulary_size=VOCABULARY, num_layers=2, num_query_heads=4, num_key_value_heads=2,
               hidden_dim=16, intermediate_dim=16)
MIT = dict(layerwise_depths=[1, 1], num_layers=2, layerwise_num_heads=[1, 2],
           layerwise_sr_ratios=[2, 1], max_drop_path_rate=0.0, layerwise_patch_sizes=[7, 3],
           layerwise_strides=[4, 2], image_shape=(32, 32, 3), hidden_dims=[4, 8])
GEMMA = dict(vocabulary_size=VOCABULARY, num_layers=2, num_query_heads=4, num_key_value_heads=2,
             hidden_dim=16, intermediate_dim=16, head_dim=4, attention_logit_soft_cap=20.0,
             use_sliding_window_attention=True, sliding_window_size=3)
GEMMA3N = dict(text_vocab_size=VOCABULARY, text_hidden_size=8, num_hidden_layers=2,
               pad_token_id=0, num_attention_heads=2, num_key_value_heads=1, head_dim=4,
               intermediate_size=[16, 16], hidden_activation="gelu_approximate",
               layer_types=["sliding_attention", "full_attention"], sliding_window=4,
               rope_theta=10000.0, max_position_embeddings=16,
               vocab_size_per_layer_input=VOCABULARY, hidden_size_per_layer_input=2,
               altup_num_inputs=2, laurel_rank=1)
PALIGEMMA = dict(vocabulary_size=VOCABULARY, image_size=16, num_layers=2, num_query_heads=2,
                 num_key_value_heads=1, hidden_dim=8, intermediate_dim=16, head_dim=4,
                 vit_patch_size=4, vit_num_heads=2, vit_hidden_dim=8, vit_num_layers=2)
SMOL = dict(vocabulary_size=VOCABULARY, hidden_dim=16, intermediate_dim=16, num_layers=2,
            num_attention_heads=4, num_key_value_heads=2, attention_bias=False,
            attention_dropout=0.0, rope_layer_enabled_list=[True, False],
            layer_types=["attention", "attention"], mlp_bias=False, layer_norm_epsilon=1e-6,
            max_position_embeddings=32, rope_theta=10000.0, partial_rotary_factor=1.0)
# Qwen 3.5: head_dim 8, as a quarter of each head rotates and that must be even
QWEN35 = dict(vocabulary_size=VOCABULARY, num_layers=2, num_query_heads=4, num_key_value_heads=2,
              head_dim=8, hidden_dim=16, layer_types=["linear_attention", "full_attention"],
              linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=4,
              linear_value_head_dim=4)
T5GEMMA = dict(vocabulary_size=VOCABULARY, encoder_hidden_dim=16, encoder_intermediate_dim=16,
               encoder_num_layers=2, encoder_num_attention_heads=4, encoder_num_key_value_heads=2,
               encoder_head_dim=4, encoder_layer_types=["sliding_attention", "full_attention"],
               decoder_hidden_dim=16, decoder_intermediate_dim=16, decoder_num_layers=2,
               decoder_num_attention_heads=4, decoder_num_key_value_heads=2, decoder_head_dim=4,
               decoder_layer_types=["sliding_attention", "full_attention"],
               sliding_window=4)


# fmt: on


def _clip(m: Any) -> Any:
    from keras_hub.src.models.clip.clip_text_encoder import CLIPTextEncoder
    from keras_hub.src.models.clip.clip_vision_encoder import CLIPVisionEncoder

    vision = CLIPVisionEncoder(
        patch_size=4,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        image_shape=IMAGE,
    )
    text = CLIPTextEncoder(
        vocabulary_size=VOCABULARY,
        embedding_dim=8,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        max_sequence_length=TOKENS,
    )
    return m.CLIPBackbone(vision_encoder=vision, text_encoder=text, projection_dim=8)


def _metaclip2(m: Any) -> Any:
    from keras_hub.src.models.metaclip_2.metaclip_2_text_encoder import MetaCLIP2TextEncoder
    from keras_hub.src.models.metaclip_2.metaclip_2_vision_encoder import (
        MetaCLIP2VisionEncoder,
    )

    vision = MetaCLIP2VisionEncoder(
        patch_size=4,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        image_shape=IMAGE,
    )
    text = MetaCLIP2TextEncoder(
        vocabulary_size=VOCABULARY,
        embedding_dim=8,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        max_sequence_length=TOKENS,
    )
    return m.MetaCLIP2Backbone(vision_encoder=vision, text_encoder=text, projection_dim=8)


def _siglip(m: Any) -> Any:
    from keras_hub.src.models.siglip.siglip_text_encoder import SigLIPTextEncoder
    from keras_hub.src.models.siglip.siglip_vision_encoder import SigLIPVisionEncoder

    vision = SigLIPVisionEncoder(
        patch_size=4,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        image_shape=IMAGE,
    )
    text = SigLIPTextEncoder(
        vocabulary_size=VOCABULARY,
        embedding_dim=8,
        hidden_dim=8,
        num_layers=2,
        num_heads=2,
        intermediate_dim=16,
        max_sequence_length=TOKENS,
    )
    return m.SigLIPBackbone(vision_encoder=vision, text_encoder=text)


def _blip2(m: Any) -> Any:
    from keras_hub.src.models.blip2.blip2_custom_opt import BLIP2CustomOPT
    from keras_hub.src.models.blip2.blip2_qformer import BLIP2QFormer
    from keras_hub.src.models.blip2.blip2_vision_encoder import BLIP2VisionEncoder

    vision = BLIP2VisionEncoder(
        image_size=16,
        patch_size=4,
        num_layers=1,
        num_heads=2,
        hidden_dim=8,
        intermediate_dim=16,
        use_patch_bias=True,
        use_class_token=True,
        use_mha_bias=True,
        use_mlp_bias=True,
        dropout_rate=0.0,
        layer_norm_epsilon=1e-6,
        initializer_range=0.02,
    )
    qformer = BLIP2QFormer(
        num_query_tokens=2,
        num_layers=1,
        num_heads=2,
        hidden_dim=8,
        intermediate_dim=16,
        vision_dim=8,
        cross_attention_frequency=1,
        dropout=0.0,
        layer_norm_epsilon=1e-6,
    )
    language = BLIP2CustomOPT(
        vocabulary_size=VOCABULARY,
        num_layers=1,
        num_heads=2,
        hidden_dim=8,
        intermediate_dim=16,
        num_query_tokens=2,
        dropout=0.0,
        qformer_hidden_dim=8,
        max_sequence_length=12,
    )
    return m.BLIP2Backbone(vision_encoder=vision, qformer=qformer, language_model=language)


def _sam(m: Any) -> Any:
    from keras_hub.src.models.sam.sam_mask_decoder import SAMMaskDecoder
    from keras_hub.src.models.sam.sam_prompt_encoder import SAMPromptEncoder

    encoder = m.ViTDetBackbone(
        hidden_size=8,
        num_layers=2,
        intermediate_dim=16,
        num_heads=2,
        global_attention_layer_indices=[1],
        patch_size=4,
        num_output_channels=8,
        window_size=2,
        image_shape=IMAGE,
    )
    prompts = SAMPromptEncoder(
        hidden_size=8, image_embedding_size=(4, 4), input_image_size=(16, 16), mask_in_channels=4
    )
    masks = SAMMaskDecoder(
        num_layers=1,
        hidden_size=8,
        intermediate_dim=16,
        num_heads=2,
        embedding_dim=8,
        num_multimask_outputs=3,
        iou_head_depth=1,
        iou_head_hidden_dim=8,
    )
    return m.SAMBackbone(image_encoder=encoder, prompt_encoder=prompts, mask_decoder=masks)


def _sd3(m: Any) -> Any:
    from keras_hub.src.models.clip.clip_text_encoder import CLIPTextEncoder
    from keras_hub.src.models.vae.vae_backbone import VAEBackbone

    vae = VAEBackbone([32, 32], [1, 1], [32, 32], [1, 1], sampler_method="mode", name="vae")
    clip_l = CLIPTextEncoder(20, 8, 8, 2, 2, 16, "quick_gelu", -2, name="clip_l")
    clip_g = CLIPTextEncoder(20, 8, 8, 2, 2, 16, "gelu", -2, name="clip_g")
    return m.StableDiffusion3Backbone(
        mmdit_patch_size=2,
        mmdit_hidden_dim=8,
        mmdit_num_layers=1,
        mmdit_num_heads=2,
        mmdit_position_size=16,
        mmdit_qk_norm=None,
        mmdit_dual_attention_indices=None,
        vae=vae,
        clip_l=clip_l,
        clip_g=clip_g,
        image_shape=(16, 16, 3),
    )


def _mobilenet_v5(m: Any) -> Any:
    pair = lambda a, b: [[a, b]]  # noqa: E731 - one stack: an inverted residual, then attention
    return m.MobileNetV5Backbone(
        stackwise_block_types=pair("er", "mqa"),
        stackwise_num_blocks=[2],
        stackwise_num_filters=pair(8, 8),
        stackwise_strides=pair(2, 1),
        stackwise_act_layers=pair("relu", "gelu"),
        stackwise_exp_ratios=pair(2.0, 0.0),
        stackwise_se_ratios=pair(0.0, 0.0),
        stackwise_dw_kernel_sizes=pair(0, 0),
        stackwise_dw_start_kernel_sizes=pair(0, 0),
        stackwise_dw_end_kernel_sizes=pair(0, 0),
        stackwise_exp_kernel_sizes=pair(3, 0),
        stackwise_pw_kernel_sizes=pair(1, 0),
        stackwise_num_heads=pair(0, 2),
        stackwise_key_dims=pair(0, 4),
        stackwise_value_dims=pair(0, 4),
        stackwise_kv_strides=pair(0, 2),
        stackwise_use_cpe=pair(False, False),
        num_features=8,
        use_msfa=False,
        image_shape=(32, 32, 3),
        stem_size=8,
    )


def _depth_anything(m: Any) -> Any:
    encoder = m.DINOV2Backbone(
        patch_size=14,
        num_layers=4,
        hidden_dim=16,
        num_heads=2,
        intermediate_dim=32,
        image_shape=(126, 126, 3),
        position_embedding_shape=(126, 126, 3),
        apply_layernorm=True,
        name="image_encoder",
    )
    return m.DepthAnythingBackbone(
        image_encoder=encoder,
        reassemble_factors=[4, 2, 1, 0.5],
        neck_hidden_dims=[8] * 4,
        fusion_hidden_dim=8,
        head_hidden_dim=8,
        head_in_index=-1,
        feature_keys=["stage1", "stage2", "stage3", "stage4"],
    )


def _parseq(m: Any) -> Any:
    encoder = m.ViTBackbone(
        image_shape=(8, 16, 3),
        patch_size=(4, 8),
        num_layers=1,
        num_heads=2,
        hidden_dim=8,
        mlp_dim=16,
        use_class_token=False,
        name="image_encoder",
    )
    return m.PARSeqBackbone(
        image_encoder=encoder,
        vocabulary_size=VOCABULARY,
        max_label_length=5,
        decoder_hidden_dim=8,
        num_decoder_layers=1,
        num_decoder_heads=2,
        decoder_mlp_dim=16,
    )


def _d_fine(m: Any) -> Any:
    stages = [
        [8, 8, 16, 1, 3, 3],
        [16, 8, 32, 1, 3, 3],
        [32, 16, 32, 2, 3, 5],
        [32, 16, 32, 1, 3, 5],
    ]
    features = m.HGNetV2Backbone(
        stem_channels=[3, 8, 8],
        stackwise_stage_filters=stages,
        apply_downsample=[False, True, True, True],
        use_lightweight_conv_block=[False, False, True, True],
        depths=[1, 1, 1, 1],
        hidden_sizes=[16, 32, 32, 32],
        embedding_size=8,
        use_learnable_affine_block=True,
        hidden_act="relu",
        image_shape=(None, None, 3),
        out_features=["stage3", "stage4"],
    )
    return m.DFineBackbone(
        backbone=features,
        decoder_in_channels=[16, 16],
        encoder_hidden_dim=16,
        num_denoising=0,
        num_labels=4,
        hidden_dim=16,
        learn_initial_query=False,
        num_queries=4,
        anchor_image_size=(32, 32),
        feat_strides=[16, 32],
        num_feature_levels=2,
        encoder_in_channels=[32, 32],
        encode_proj_layers=[1],
        num_attention_heads=2,
        encoder_ffn_dim=16,
        num_encoder_layers=1,
        hidden_expansion=0.34,
        depth_multiplier=0.5,
        eval_idx=-1,
        num_decoder_layers=1,
        decoder_attention_heads=2,
        decoder_ffn_dim=16,
        decoder_n_points=[2, 2],
        lqe_hidden_dim=8,
        num_lqe_layers=1,
        image_shape=(None, None, 3),
        out_features=["stage3", "stage4"],
    )


def _sam3(m: Any) -> Any:
    from keras_hub.src.models.sam3.sam3_detr_decoder import SAM3DetrDecoder
    from keras_hub.src.models.sam3.sam3_detr_encoder import SAM3DetrEncoder
    from keras_hub.src.models.sam3.sam3_geometry_encoder import SAM3GeometryEncoder
    from keras_hub.src.models.sam3.sam3_mask_decoder import SAM3MaskDecoder
    from keras_hub.src.models.sam3.sam3_text_encoder import SAM3TextEncoder
    from keras_hub.src.models.sam3.sam3_vision_encoder import SAM3VisionEncoder

    small = dict(hidden_dim=8, intermediate_dim=16, num_heads=2)
    return m.SAM3PromptableConceptBackbone(
        vision_encoder=SAM3VisionEncoder(
            image_shape=(56, 56, 3),
            patch_size=14,
            num_layers=2,
            fpn_hidden_dim=8,
            fpn_scale_factors=[4.0, 2.0, 1.0, 0.5],
            pretrain_image_shape=(28, 28, 3),
            window_size=2,
            global_attn_indexes=[1],
            **small,
        ),
        text_encoder=SAM3TextEncoder(
            vocabulary_size=VOCABULARY, embedding_dim=8, num_layers=1, **small
        ),
        geometry_encoder=SAM3GeometryEncoder(num_layers=1, roi_size=7, **small),
        detr_encoder=SAM3DetrEncoder(num_layers=1, **small),
        detr_decoder=SAM3DetrDecoder(
            image_shape=(56, 56, 3), patch_size=14, num_layers=1, num_queries=4, **small
        ),
        mask_decoder=SAM3MaskDecoder(num_upsampling_stages=3, hidden_dim=8, num_heads=2),
    )


def _sam3_inputs(backbone: Any) -> dict:
    return {
        "pixel_values": np.ones((BATCH, 56, 56, 3), "float32"),
        "token_ids": np.ones((BATCH, TOKENS), "int32"),
        "padding_mask": PADDING.astype(bool),
        "boxes": np.ones((BATCH, 1, 5), "float32"),
        "box_labels": np.ones((BATCH, 1), "int32"),
    }


def _esm_inputs(backbone: Any) -> dict:
    """Token ids padded with the pad id (ESM reads its mask from the ids)."""
    ids = np.random.default_rng(0).integers(2, VOCABULARY, size=(BATCH, TOKENS))
    return {"token_ids": np.where(PADDING == 1, ids, backbone.pad_token_id).astype("int32")}


def _d_fine_inputs(backbone: Any) -> np.ndarray:
    return np.random.default_rng(0).random((BATCH, 32, 32, 3), "float32")


def _moonshine_inputs(backbone: Any) -> dict:
    samples = 64 * 48  # strides 64, 3 and 2: 8 encoder frames
    audio = np.random.default_rng(0).random((BATCH, samples, 1)).astype("float32")
    return {
        "encoder_input_values": audio,
        "encoder_padding_mask": np.ones((BATCH, samples), bool),
        "decoder_token_ids": np.ones((BATCH, TOKENS), "int32"),
        "decoder_padding_mask": PADDING.astype(bool),
    }


# fmt: off
MODELS: tuple[HubModel, ...] = (
    # Encoders built on keras.layers.MultiHeadAttention (or keras-hub's subclasses of it)
    HubModel("Albert", dict(**TEXT, num_heads=2, embedding_dim=4, max_sequence_length=12), 2, (2,)),
    HubModel("Bert", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("DistilBert", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("Electra", ELECTRA, 2, (2,)),
    HubModel("Roberta", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("XLMRoberta", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("Bart", dict(**TEXT, num_heads=2, max_sequence_length=12), 6, (2,)),
    HubModel("Whisper", WHISPER, 6, (2,)),
    HubModel("EdRec", EDREC, 3, (2,)),
    HubModel("XLNet", dict(**TEXT, num_heads=2), 2, (2,), "relative"),
    # Decoders
    HubModel("GPT2", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("OPT", dict(**TEXT, num_heads=2, max_sequence_length=12), 2, (2,)),
    HubModel("Bloom", dict(**TEXT, num_heads=2), 2, (2,), "alibi"),
    HubModel("Falcon", dict(**TEXT, num_attention_heads=2), 2, (2,), "alibi"),
    HubModel("GPTNeoX", dict(TEXT, hidden_dim=16, num_heads=2, max_sequence_length=12), 2, (2,),
             "rope"),  # hidden_dim 16: its rotary quarter of each head must be even
    HubModel("Llama", GROUPED, 2, (4,), "rope"),
    HubModel("Llama3", GROUPED, 2, (4,), "rope"),
    HubModel("Mistral", dict(**GROUPED, sliding_window=4), 2, (4,), "rope"),
    HubModel("Mixtral", dict(**GROUPED, num_experts=2), 2, (4,), "rope"),
    HubModel("Phi3", GROUPED, 2, (4,), "rope"),
    HubModel("Qwen", GROUPED, 2, (4,), "rope"),
    HubModel("Qwen2", GROUPED, 2, (4,), "rope"),  # an alias of QwenBackbone
    HubModel("Qwen3", dict(**GROUPED, head_dim=4), 2, (4,), "rope"),
    HubModel("QwenMoe", dict(**GROUPED, **EXPERTS, shared_expert_intermediate_dim=8), 2, (4,),
             "rope"),
    HubModel("Qwen3Moe", dict(**GROUPED, **EXPERTS), 2, (4,), "rope"),
    HubModel("Qwen3_5", dict(**QWEN35, intermediate_dim=16), 1, (4,), "rope"),  # + linear attention
    HubModel("Qwen3_5Moe", dict(**QWEN35, **EXPERTS, shared_expert_intermediate_size=8), 1, (4,),
             "rope"),
    HubModel("SmolLM", SMOL, 2, (4,), "rope/none"),  # an alias of SmolLM3Backbone
    HubModel("SmolLM3", SMOL, 2, (4,), "rope/none"),  # its second layer has no RoPE ("NoPE")
    HubModel("Gemma", GEMMA, 2, (4,), "rope"),
    HubModel("Gemma3", dict(**GROUPED, head_dim=4, image_size=16, sliding_window_size=4), 2, (4,),
             "rope"),
    HubModel("Gemma3n", GEMMA3N, 2, (2,), "rope"),
    HubModel("Gemma4", dict(**GROUPED, head_dim=4, image_size=16, sliding_window_size=4,
                            sliding_window_pattern=2), 2, (4,), "rope"),
    HubModel("GptOss", dict(**GROUPED, num_experts=2, top_k=1, sliding_window=4), 2, (4,), "rope"),
    # Encoder-decoders and encoders with attention layers of their own
    HubModel("T5", dict(**TEXT, num_heads=2), 6, (2,), "t5-buckets"),
    HubModel("T5Gemma", T5GEMMA, 6, (4,), "rope/none"),  # none: cross-attention
    HubModel("T5Gemma2", T5GEMMA, 4, (4,), "rope"),  # the decoder's self and cross merged
    HubModel("DebertaV3", dict(**TEXT, num_heads=2, max_sequence_length=12, bucket_size=4), 2, (2,),
             "disentangled"),
    HubModel("RoformerV2", dict(**TEXT, num_heads=2, head_size=4), 2, (2,), "rope"),
    HubModel("ESM", dict(**TEXT, num_heads=2), 2, (2,), "rope", _esm_inputs),
    HubModel("ESM2", dict(**TEXT, num_heads=2), 2, (2,), "rope", _esm_inputs),
    HubModel("Moonshine", MOONSHINE, 3, (2,), "rope/none", _moonshine_inputs),
    # Vision and multimodal
    HubModel("ViT", dict(image_shape=IMAGE, **VISION, mlp_dim=16), 2, (2,)),
    HubModel("DeiT", dict(image_shape=IMAGE, **VISION, intermediate_dim=16), 2, (2,)),
    HubModel("DINOV2", dict(image_shape=IMAGE, position_embedding_shape=IMAGE, **VISION,
                            intermediate_dim=16), 2, (2,)),
    HubModel("DINOV3", dict(image_shape=IMAGE, num_register_tokens=1, **VISION,
                            intermediate_dim=16), 2, (2,), "rope"),
    HubModel("DepthAnything", _depth_anything, 4, (2,)),
    HubModel("SwinTransformer", SWIN, 4, (2, 4), "relative-table"),
    HubModel("ViTDet", VITDET, 2, (2,), "relative-axes"),
    HubModel("SAM", _sam, 2, (2,), "relative-axes"),
    HubModel("SAM3PromptableConcept", _sam3, 11, (2,), "rope/none", _sam3_inputs),
    HubModel("MiT", MIT, 2, (1, 2)),
    HubModel("SegFormer", lambda m: m.SegFormerBackbone(image_encoder=m.MiTBackbone(**MIT),
                                                        projection_filters=8), 2, (1, 2)),
    HubModel("VideoPrism", PRISM, 2, (2,)),
    HubModel("MobileNetV5", _mobilenet_v5, 1, (2,)),
    HubModel("CLIP", _clip, 4, (2,)),
    HubModel("MetaCLIP2", _metaclip2, 4, (2,)),
    HubModel("SigLIP", _siglip, 5, (2,)),
    HubModel("BLIP2", _blip2, 4, (2,)),
    HubModel("PaliGemma", PALIGEMMA, 4, (2,), "none/rope"),
    HubModel("PARSeq", _parseq, 3, (2,)),
    HubModel("StableDiffusion3", _sd3, 11, (1, 2), inputs=lambda b: model_inputs(b, 20),
             weighted=1),  # fmt: skip
    HubModel("Flux", FLUX, 2, (2,), "rope", weighted=2),
    HubModel("DFine", _d_fine, 2, (2,), "added", _d_fine_inputs, warnings=2),
)
# fmt: on

UNBUILT: dict[str, str] = {}  # attention-bearing backbones not built here, and why: none
