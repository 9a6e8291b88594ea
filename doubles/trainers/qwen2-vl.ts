import { smartResize, type Size } from '../../core/smart-resize';

/**
 * TEST DOUBLE support: what a Qwen2.5-VL tokenizer and processor do to a prompt, for the trainer
 * doubles. Checked against the chat template Qwen2.5-VL ships (chat_template.json, the same text
 * as the Qwen2-VL template LLaMA-Factory's `qwen2_vl` mirrors): a default system turn when the
 * first message is not one, `<|im_start|>role\n ... <|im_end|>\n` per message, each image item as
 * `<|vision_start|><|image_pad|><|vision_end|>`, text items concatenated, and
 * `<|im_start|>assistant\n` as the generation prompt. The processor then expands each image's pad
 * into one pad per vision token: (height / 28) x (width / 28) of the image after smart_resize with
 * the processor's default pixel bounds (core/smart-resize.ts has the same defaults).
 */

export type TemplatePart = { readonly type: string; readonly text?: string | null };
export interface TemplateMessage {
  readonly role: string;
  readonly content: string | readonly TemplatePart[];
}

export const IMAGE_PAD = '<|image_pad|>';
export const END_OF_TURN = '<|im_end|>';
const IMAGE = `<|vision_start|>${IMAGE_PAD}<|vision_end|>`;

/** tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True). */
export function applyChatTemplate(messages: readonly TemplateMessage[]): string {
  let out = messages[0]?.role === 'system' ? '' : `<|im_start|>system\nYou are a helpful assistant.${END_OF_TURN}\n`;
  for (const message of messages) {
    // The template's test for an image item: its type, or an `image` or `image_url` field (what OpenAI-style requests carry).
    const body = typeof message.content === 'string' ? message.content : message.content.map((part) => (part.type === 'image' || part.type === 'image_url' ? IMAGE : (part.text ?? ''))).join('');
    out += `<|im_start|>${message.role}\n${body}${END_OF_TURN}\n`;
  }
  return `${out}<|im_start|>assistant\n`;
}

/** Vision tokens of one image: one per 28x28 patch of the resized image. */
export const visionTokens = (image: Size): number => {
  const resized = smartResize(image.width, image.height);
  return (resized.width / 28) * (resized.height / 28);
};

/** The templated prompt as decoded from its token ids: each image pad expanded to the image's vision tokens. */
export function expandImagePads(prompt: string, images: readonly Size[]): string {
  const pieces = prompt.split(IMAGE_PAD);
  if (pieces.length - 1 !== images.length) throw new Error(`Image features and image tokens do not match: tokens: ${pieces.length - 1}, features ${images.length}`);
  return pieces.reduce((out, piece, i) => out + IMAGE_PAD.repeat(visionTokens(images[i - 1] as Size)) + piece);
}

/**
 * The text LLaMA-Factory 0.9.5 trains on for a ShareGPT row with its `qwen2_vl` template
 * (data/template.py: format_system, format_user ending in the assistant's header, format_assistant;
 * the template's default system when the row has none), each `<image>` as the Qwen2-VL image
 * placeholder mm_plugin.py puts in before expanding its pads. Prompt and answers in one string.
 */
export function renderSharegptRow(messages: ReadonlyArray<{ readonly role: string; readonly content: string }>): string {
  const first = messages[0];
  let out = first?.role === 'system' ? '' : `<|im_start|>system\nYou are a helpful assistant.${END_OF_TURN}\n`;
  for (const message of messages) {
    const content = message.content.replaceAll('<image>', IMAGE);
    if (message.role === 'system') out += `<|im_start|>system\n${content}${END_OF_TURN}\n`;
    else if (message.role === 'user') out += `<|im_start|>user\n${content}${END_OF_TURN}\n<|im_start|>assistant\n`;
    else out += `${content}${END_OF_TURN}\n`;
  }
  return out;
}
