import { publicBaseUrl, twilioSettings, type Config } from '@/lib/config';
import { createSmsTransport, statusCallbackUrl } from '@/lib/sms/transport';
import { phaseTable } from '@/lib/transport/phases';
import type { SmsProvider } from '@/lib/channels/provider';

/** Twilio Programmable Messaging (lib/sms): the official client, its status callback carrying the correlation. */
export const twilioProvider: SmsProvider = {
  medium: 'sms',
  rows: phaseTable.filter((row) => row.transport === 'twilio'),
  create: (config: Config) => {
    const twilio = twilioSettings(config);
    if (!twilio.ok) return twilio;
    return {
      ok: true,
      transport: createSmsTransport({ twilio: twilio.settings, statusCallbackFor: (correlation) => statusCallbackUrl(publicBaseUrl(config), correlation) }),
      sender: 'from' in twilio.settings.sender ? twilio.settings.sender.from : twilio.settings.sender.messagingServiceSid,
    };
  },
};
