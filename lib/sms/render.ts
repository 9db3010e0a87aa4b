import { SegmentedMessage } from 'sms-segments-calculator';
import { renderRequestOf, type RenderInput } from '@/lib/mail/render';
import { templatesOf } from '@/lib/templates/load';
import { RenderError, renderSms } from '@/lib/templates/render';

/**
 * A notice's text message from the operator's `sms` template (lib/templates, the same engine,
 * variables and locale fallback as the email): the whole body, nothing added. Throws RenderError
 * naming the template and variable, never a value.
 */
export function renderSmsBody({ config, ...input }: RenderInput): string {
  let set;
  try {
    set = templatesOf(config);
  } catch (error) {
    throw new RenderError(`templates do not load: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 160)}`);
  }
  return renderSms(set, renderRequestOf(config, input)).text;
}

export type Segments = { encoding: 'GSM-7' | 'UCS-2'; segments: number; characters: number };

/** How many SMS segments the text takes (GSM-7: 160, or 153 per part; UCS-2: 70, or 67), as Twilio counts them. */
export function segmentsOf(text: string): Segments {
  const message = new SegmentedMessage(text);
  return { encoding: message.encodingName === 'GSM-7' ? 'GSM-7' : 'UCS-2', segments: message.segmentsCount, characters: message.numberOfCharacters };
}
