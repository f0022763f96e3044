/**
 * The hand-written layer over the generated types (src/schema.d.ts, by openapi-typescript)
 * and openapi-fetch: retries of what the service marks `retryable` (honouring
 * `Retry-After`, within a number of attempts and a total time), the credits of every
 * answer (the `Credits-*` headers), batches of any length, and bulk jobs.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
export type Job = components["schemas"]["Job"];
export const VERSION = "2026.12.7"; // the API's version (info.version of the OpenAPI document)
export const BATCH_LIMIT = 100; // items per batch call, as /v1 allows

/** What a call cost and where the month stands (null: the answer did not say). */
export interface Credits {
  charged: number | null;
  used: number | null;
  remaining: number | null;
  quota: number | null;
  state: string | null;
}

export interface Answer<T> {
  data: T;
  credits: Credits;
  requestId: string | null;
  attempts: number;
}

/** An error answer in the service's envelope: `code` and `message` say what to do. */
export class ServiceError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | null;
  constructor(
    readonly status: number,
    readonly envelope: Record<string, unknown>,
  ) {
    super(`${status} ${String(envelope.code)}: ${String(envelope.message)}`);
    this.code = String(envelope.code ?? "INTERNAL");
    this.retryable = envelope.retryable === true;
    this.retryAfterSeconds =
      typeof envelope.retryAfterSeconds === "number" ? envelope.retryAfterSeconds : null;
  }
}

export interface Options {
  apiKey: string;
  baseUrl?: string;
  maxAttempts?: number; // tries of a retryable refusal, the first included
  maxWaitSeconds?: number; // longest total wait between tries
}

interface Sent<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function credits(headers: Headers): Credits {
  const number = (name: string): number | null => {
    const value = headers.get(name);
    return value !== null && /^-?\d+$/.test(value) ? Number(value) : null;
  };
  return {
    charged: number("Credits-Charged"),
    used: number("Credits-Used"),
    remaining: number("Credits-Remaining"),
    quota: number("Credits-Quota"),
    state: headers.get("Credits-State"),
  };
}

function withoutTrailingSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

function serviceError(response: Response, body: unknown): ServiceError {
  const envelope: Record<string, unknown> =
    typeof body === "object" && body !== null && "error" in body
      ? { ...(body as { error: Record<string, unknown> }).error }
      : { code: "INTERNAL", message: String(body).slice(0, 200) };
  const retryAfter = response.headers.get("Retry-After");
  if (envelope.retryAfterSeconds == null && retryAfter !== null && /^\d+$/.test(retryAfter)) {
    envelope.retryAfterSeconds = Number(retryAfter);
  }
  return new ServiceError(response.status, envelope);
}

export class GeoService {
  /** The generated, typed client: every /v1 path with its parameters and answers. */
  readonly api: Client<paths>;
  private readonly maxAttempts: number;
  private readonly maxWaitSeconds: number;

  constructor(options: Options) {
    this.api = createClient<paths>({
      baseUrl: withoutTrailingSlash(options.baseUrl ?? "http://127.0.0.1:8000"),
      headers: {
        Authorization: `Bearer ${options.apiKey}`,
        "User-Agent": `geosvc-client-typescript/${VERSION}`,
      },
    });
    this.maxAttempts = options.maxAttempts ?? 4;
    this.maxWaitSeconds = options.maxWaitSeconds ?? 30;
  }

  /** Send a request through `api`, retrying retryable refusals; the typed data and its cost. */
  async call<T>(send: (api: Client<paths>) => Promise<Sent<T>>): Promise<Answer<T>> {
    let waited = 0;
    for (let attempts = 1; ; attempts++) {
      const sent = await send(this.api);
      if (sent.response.ok && sent.data !== undefined) {
        const headers = sent.response.headers;
        return {
          data: sent.data,
          credits: credits(headers),
          requestId: headers.get("X-Request-ID"),
          attempts,
        };
      }
      const error = serviceError(sent.response, sent.error);
      const pause = error.retryAfterSeconds ?? 2 ** (attempts - 1);
      if (!error.retryable || attempts >= this.maxAttempts || waited + pause > this.maxWaitSeconds) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause * 1000));
      waited += pause;
    }
  }

  /** A batch path over any number of items, BATCH_LIMIT at a time, in order. */
  async *callBatches<Item, T>(
    send: (api: Client<paths>, items: Item[]) => Promise<Sent<T>>,
    items: Item[],
  ): AsyncGenerator<Answer<T>> {
    for (let start = 0; start < items.length; start += BATCH_LIMIT) {
      const slice = items.slice(start, start + BATCH_LIMIT);
      yield await this.call((api) => send(api, slice));
    }
  }

  async submitJob(
    tool: components["schemas"]["JobSubmission"]["tool"],
    items: Record<string, unknown>[],
  ): Promise<Job> {
    const answer = await this.call((api) =>
      api.POST("/v1/jobs", { body: { tool, items } as components["schemas"]["JobSubmission"] }),
    );
    return answer.data;
  }

  /** Poll a job until it is no longer working. */
  async waitForJob(jobId: string, pollSeconds = 1, timeoutSeconds = 3600): Promise<Job> {
    const deadline = Date.now() + timeoutSeconds * 1000;
    for (;;) {
      const job = (
        await this.call((api) => api.GET("/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } }))
      ).data;
      if (job.status !== "working") return job;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still working after ${timeoutSeconds} s`);
      await new Promise((resolve) => setTimeout(resolve, pollSeconds * 1000));
    }
  }

  /** A finished job's rows in input order, each with its `result` or its `error`. */
  async jobRows(jobId: string): Promise<Record<string, unknown>[]> {
    const answer = await this.call((api) =>
      api.GET("/v1/jobs/{job_id}/results", {
        params: { path: { job_id: jobId } },
        headers: { Accept: "application/x-ndjson" },
        parseAs: "text",
      }),
    );
    return String(answer.data)
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Submit a job, wait for it, read its rows. */
  async runJob(
    tool: components["schemas"]["JobSubmission"]["tool"],
    items: Record<string, unknown>[],
  ): Promise<{ job: Job; rows: Record<string, unknown>[] }> {
    const job = await this.waitForJob((await this.submitJob(tool, items)).id);
    return { job, rows: await this.jobRows(job.id) };
  }
}
