import type { BulkEmailEntryResult, SESv2Client, SendBulkEmailCommandInput, SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { listUnsubscribeHeaders, type EmailTransport, type OutgoingNotice } from '@/lib/mail/transport';
import type { ChannelOutcome } from '@/lib/channels/types';
import { httpAnswers, outcomeOfRow, probeOutcome, unansweredOutcome } from '@/lib/channels/http-phase';
import { sesRows } from './phases';

type Sesv2 = typeof import('@aws-sdk/client-sesv2');

export type SesSettings = {
  region: string;
  /** Unset: the SDK's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** SES_ENDPOINT: the regional endpoint when unset, or a local peer (testing/ses-peer.ts). */
  endpoint: string | null;
  configurationSet: string | null;
  from: string;
  timeoutMs: number;
};

/**
 * One notice through SES v2 `SendEmail` with the official `@aws-sdk/client-sesv2`. SES replaces
 * any Message-ID we set, so the correlation rides as a message tag (`EmailTags`, echoed in every
 * event record) and our header; the returned `MessageId` is stored on the ledger row, the other
 * link the events carry.
 *
 * `maxAttempts: 1`: the SDK retries 5xx, throttles and resets three times by default, and a
 * retried SendEmail after a reset is a second email; the ledger decides retries. The request
 * timeout throws (`throwOnRequestTimeout`): without it the handler only warns and keeps waiting.
 * The SDK is loaded on the first send or probe.
 */
export function createSesTransport(settings: SesSettings): EmailTransport & { sendBatch: NonNullable<EmailTransport['sendBatch']>; batchLimit: number } {
  let connecting: Promise<{ sdk: Sesv2; client: SESv2Client }> | null = null;
  const connect = () =>
    (connecting ??= import('@aws-sdk/client-sesv2').then((sdk) => ({
      sdk,
      client: new sdk.SESv2Client({
        region: settings.region,
        ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
        ...(settings.credentials ? { credentials: settings.credentials } : {}),
        maxAttempts: 1,
        requestHandler: { requestTimeout: settings.timeoutMs, connectionTimeout: Math.min(settings.timeoutMs, 5_000), throwOnRequestTimeout: true },
      }),
    })));

  return {
    name: 'ses',
    send: async (mail, options = {}) => {
      if (options.signal?.aborted)
        return { kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' };
      const { sdk, client } = await connect();
      try {
        const sent = await client.send(new sdk.SendEmailCommand(sesEmail(mail, settings)));
        return { kind: 'accepted', providerMessageId: sent.MessageId ?? null };
      } catch (error) {
        return classifySesError(error);
      }
    },
    batchLimit: SES_BULK_LIMIT,
    /**
     * SendBulkEmail: up to 50 entries, each its own message (an inline template whose subject,
     * HTML and text are the entry's own replacement data, so every notice keeps its own code and
     * links), its correlation tag and headers; 200 with a `{Status, MessageId}` per entry in
     * order, each classified by the SendEmail error its Status names. A call refused or
     * unanswered whole gives every entry that one outcome.
     */
    sendBatch: async (mails, options = {}) => {
      if (mails.length === 0) return [];
      if (mails.length > SES_BULK_LIMIT) throw new RangeError(`an SES SendBulkEmail takes at most ${SES_BULK_LIMIT} entries, not ${mails.length}`);
      if (options.signal?.aborted)
        return mails.map(() => ({ kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' }));
      const { sdk, client } = await connect();
      let results: BulkEmailEntryResult[];
      try {
        results = (await client.send(new sdk.SendBulkEmailCommand(sesBulkEmail(mails, settings)))).BulkEmailEntryResults ?? [];
      } catch (error) {
        const outcome = classifySesError(error);
        return mails.map(() => outcome);
      }
      return mails.map((_, index) => sesEntryOutcome(results[index]));
    },
    // GetAccount: reads the account's sending state with our credentials, sends nothing.
    probe: async () => {
      const { sdk, client } = await connect();
      try {
        await client.send(new sdk.GetAccountCommand({}));
        return { kind: 'accepted', providerMessageId: null };
      } catch (error) {
        return probeOutcome(classifySesError(error));
      }
    },
    cancelAll: () => undefined,
    close: () => {
      void connecting?.then(({ client }) => client.destroy());
    },
  };
}

/** SES's cap on SendBulkEmail entries (API reference, SendBulkEmail: BulkEmailEntries, at most 50). */
export const SES_BULK_LIMIT = 50;

/**
 * A bulk entry's Status as the SendEmail error it stands for, so the same phase rows classify it
 * (API reference, BulkEmailEntryResult). Throttles and quotas are nothing left; a Status not
 * listed (INVALID_PARAMETER, TRANSIENT_FAILURE, FAILED) is "other 4xx": refused, retried.
 */
const entryStatusAnswer: Record<string, { answer: string; status: number }> = {
  MESSAGE_REJECTED: { answer: 'MessageRejected', status: 400 },
  MAIL_FROM_DOMAIN_NOT_VERIFIED: { answer: 'MailFromDomainNotVerifiedException', status: 400 },
  CONFIGURATION_SET_DOES_NOT_EXIST: { answer: 'NotFoundException', status: 404 },
  TEMPLATE_DOES_NOT_EXIST: { answer: 'NotFoundException', status: 404 },
  ACCOUNT_SUSPENDED: { answer: 'AccountSuspendedException', status: 400 },
  ACCOUNT_SENDING_PAUSED: { answer: 'SendingPausedException', status: 400 },
  CONFIGURATION_SET_SENDING_PAUSED: { answer: 'SendingPausedException', status: 400 },
  ACCOUNT_THROTTLED: { answer: 'TooManyRequestsException', status: 429 },
  ACCOUNT_DAILY_QUOTA_EXCEEDED: { answer: 'LimitExceededException', status: 400 },
};

/** One entry's result: accepted with its MessageId, else classified as the SendEmail error its Status names. */
export function sesEntryOutcome(result: BulkEmailEntryResult | undefined): ChannelOutcome {
  // An answer without this entry's result says nothing about it: it may be out.
  if (!result?.Status) return { kind: 'unknown', errorClass: 'ses_no_entry_result', phase: 'response' };
  if (result.Status === 'SUCCESS' && result.MessageId) return { kind: 'accepted', providerMessageId: result.MessageId };
  const named = entryStatusAnswer[result.Status] ?? { answer: result.Status, status: 400 };
  return outcomeOfRow({
    rows: sesRows,
    transport: 'ses',
    phase: 'response',
    answers: httpAnswers(named.status, named.answer),
    status: named.status,
    errorClass: `ses_${result.Status}`.slice(0, 60),
  });
}

/**
 * The notices as one SendBulkEmail: an inline template of three variables that each entry fills
 * with its own rendered subject, HTML and text (SES does not escape HTML when it renders), its
 * correlation as a replacement tag and our header, and a courtesy notice's unsubscribe headers.
 */
export function sesBulkEmail(mails: OutgoingNotice[], { from, configurationSet }: Pick<SesSettings, 'from' | 'configurationSet'>): SendBulkEmailCommandInput {
  return {
    FromEmailAddress: from,
    DefaultContent: {
      Template: {
        TemplateContent: { Subject: '{{subject}}', Html: '{{html}}', Text: '{{text}}' },
        TemplateData: JSON.stringify({ subject: '', html: '', text: '' }),
      },
    },
    BulkEmailEntries: mails.map((mail) => {
      const correlation = correlationOf(mail.noticeKey);
      const headers = { [CORRELATION_HEADER]: correlation, ...listUnsubscribeHeaders(mail.listUnsubscribe) };
      return {
        Destination: { ToAddresses: [mail.to] },
        ReplacementTags: [{ Name: CORRELATION_TAG, Value: correlation }],
        ReplacementHeaders: Object.entries(headers).map(([Name, Value]) => ({ Name, Value })),
        ReplacementEmailContent: {
          ReplacementTemplate: { ReplacementTemplateData: JSON.stringify({ subject: mail.subject, html: mail.html, text: mail.text }) },
        },
      };
    }),
    ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
  };
}

type SdkError = { name?: unknown; $metadata?: { httpStatusCode?: unknown } };

/** Pure: an SDK error as the phase table reads it: a service exception by its name and status, anything else by where it stopped. */
export function classifySesError(error: unknown): Exclude<ChannelOutcome, { kind: 'accepted' }> {
  const sdkError = (typeof error === 'object' && error !== null ? error : {}) as SdkError;
  const status = typeof sdkError.$metadata?.httpStatusCode === 'number' ? sdkError.$metadata.httpStatusCode : null;
  if (status === null) return unansweredOutcome(sesRows, 'ses', error);
  const name = typeof sdkError.name === 'string' ? sdkError.name : null;
  return outcomeOfRow({
    rows: sesRows,
    transport: 'ses',
    phase: 'response',
    answers: httpAnswers(status, name),
    status,
    errorClass: `ses_${name ?? status}`.slice(0, 60),
  });
}

/** The notice as SendEmail's input: the correlation as a tag and our header, the unsubscribe headers of a courtesy notice. */
export function sesEmail(mail: OutgoingNotice, { from, configurationSet }: Pick<SesSettings, 'from' | 'configurationSet'>): SendEmailCommandInput {
  const correlation = correlationOf(mail.noticeKey);
  const headers = { [CORRELATION_HEADER]: correlation, ...listUnsubscribeHeaders(mail.listUnsubscribe) };
  return {
    FromEmailAddress: from,
    Destination: { ToAddresses: [mail.to] },
    Content: {
      Simple: {
        Subject: { Data: mail.subject, Charset: 'UTF-8' },
        Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
        Headers: Object.entries(headers).map(([Name, Value]) => ({ Name, Value })),
      },
    },
    EmailTags: [{ Name: CORRELATION_TAG, Value: correlation }],
    ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
  };
}
