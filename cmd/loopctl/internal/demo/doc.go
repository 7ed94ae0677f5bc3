// Package demo is the story behind `loopctl demo`: an agent built with package
// agent and provider/openai, talking to a scripted model server inside the
// process, that shows what the breakers do while things break.
//
// The in-process server is a loopback httptest server speaking the OpenAI Chat
// Completions wire format (llmtest) with three models: gpt-primary
// and the fallback chain gpt-backup-1, gpt-backup-2. Every model answers the
// same way, so any of them can carry a conversation on: it calls the tools a
// prompt asks for, one per turn, tries a failing tool again up to three more
// times, gives up on a refused one, and then answers. The tools are search
// (flaky; its backup is search_backup, a mirror) and calculator (reliable).
//
// The story is a sequence of agent runs on one [agent.Agent], so breaker state
// carries from run to run, with scripted faults between them:
//
//  1. everything is healthy;
//  2. gpt-primary answers HTTP 500 and gpt-backup-1 answers 429: the retry
//     ladder retries, the turns fail, the model breaker trips to the chain,
//     gpt-backup-1's rate limits escalate until its strikes run out, and the
//     chain advances to gpt-backup-2, which serves;
//  3. search fails: its breaker trips and the router sends the calls to
//     search_backup;
//  4. the models are fixed, the index is not: after the cooldowns the primary
//     model is probed twice and the model breaker recovers; search is probed
//     although search_backup is healthy (the router routes by the breakers
//     alone), the probe fails, and the call falls through to search_backup
//     within the same call, so the model reads only the backup's answer;
//  5. the index is fixed: after its cooldown search is probed and closes while
//     search_backup is still healthy;
//  6. search and search_backup both fail: both breakers trip, and the next
//     call is refused softly; the model reads the refusal and answers without
//     search;
//  7. everything is fixed; after the cooldowns search is probed and closes.
//
// With DefaultTiming the story takes about 17 seconds.
//
// Lines are written as events happen, with the elapsed time; a summary of
// models, tools and breaker transitions ends the output. [Run] checks that every
// scripted transition happened and reports the missing ones in
// [Summary.Missing].
//
// Time is injectable: [Config.Now] is the clock of both breakers and
// [Config.Wait] makes the pauses between runs, so a test can play the whole
// story on a fake clock whose waits only advance it. With [Config.BaseURL] the
// same agent, tools and prompts run against a real OpenAI-compatible server
// instead, without scripted faults or pauses.
package demo
