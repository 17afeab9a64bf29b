<?php
/*
 * Starter kit for Kozyri Arena bots in PHP (PHP 8, no extensions beyond json).
 *
 * Extend Kozyri\Bot, implement choose(), and call Kozyri\run(new MyBot()). The kit speaks
 * protocol v1 for you: it answers hello with ready, turns every request into a call to
 * choose() and sends the answer, and returns on shutdown or end of input. It asks the referee
 * for observations as deltas and rebuilds the whole observation from them, so choose() sees
 * exactly what the referee would send whole (set $observations = 'full' to get them whole).
 * Objects arrive as associative arrays. stdout belongs to the protocol: log with
 * Kozyri\log(), which writes to stderr.
 *
 *     require getenv('KOZYRI_KIT') . '/php/kozyri_bot.php';
 *
 *     final class First extends Kozyri\Bot {
 *         public function choose(Kozyri\Request $request): int|array { return 0; }
 *     }
 *
 *     Kozyri\run(new First());
 */

declare(strict_types=1);

namespace Kozyri;

// stdout belongs to the protocol: PHP's own warnings and errors go to stderr.
ini_set('display_errors', 'stderr');
error_reporting(E_ALL);

const PROTOCOL_VERSION = 1;
const RANKS = '56789TJQKA';

/** A message from the referee that the kit cannot read. */
final class ProtocolError extends \RuntimeException
{
}

/** The start of the match. */
final class Hello
{
    public function __construct(
        public readonly string $game,
        public readonly int $players,
        public readonly int $seat,
        public readonly array $params,
        public readonly array $message,
    ) {
    }
}

/** One legal action: its "type", its "card" (null if it has none), and the whole array. */
final class Action
{
    public function __construct(
        public readonly string $type,
        public readonly ?string $card,
        public readonly array $json,
    ) {
    }
}

/** Your turn: the whole observation (rebuilt from deltas) and the legal actions. */
final class Request
{
    /**
     * @param list<string> $hand
     * @param list<Action> $legalActions
     */
    public function __construct(
        public readonly int $id,
        public readonly int $deal,
        public readonly string $game,
        public readonly int $seat,
        public readonly array $hand,
        public readonly array $legalActions,
        public readonly array $observation,
        public readonly int $timeLeftMs,
        public readonly int $moveMs,
    ) {
    }
}

/** Write a line to stderr (the referee keeps it with the match log and the replay). */
function log(string ...$parts): void
{
    fwrite(STDERR, implode(' ', $parts) . "\n");
}

/** Rank of a card: "TH" -> 10; the ace is 14. */
function rank(string $card): int
{
    return strpos(RANKS, $card[0]) + 5;
}

/** Suit letter of a card: "TH" -> "H". */
function suit(string $card): string
{
    return $card[1];
}

/** Does $card beat $top for a player whose own trump suit is $trump (null: none)? */
function beats(string $card, string $top, ?string $trump): bool
{
    if (suit($card) === suit($top)) {
        return rank($card) > rank($top);
    }
    return $trump !== null && suit($card) === $trump;
}

/**
 * Bring $observation (the last one received, or []) up to date with $delta: keys in "drop"
 * go, keys in "set" take their new value, lists in "append" grow by the items given.
 */
function apply_delta(array $observation, array $delta): array
{
    foreach ($delta['drop'] ?? [] as $key) {
        unset($observation[$key]);
    }
    foreach ($delta['set'] ?? [] as $key => $value) {
        $observation[$key] = $value;
    }
    foreach ($delta['append'] ?? [] as $key => $items) {
        if (!is_array($observation[$key] ?? null)) {
            throw new ProtocolError("a delta appends to \"$key\", which is not a list");
        }
        array_push($observation[$key], ...$items);
    }
    return $observation;
}

/** Override choose(); the other hooks are optional. */
abstract class Bot
{
    public ?string $name = null;          // sent in ready
    public string $observations = 'delta'; // "delta" (rebuilt by the kit) or "full"
    public ?string $debug = null;         // set in choose() to attach a note to the answer
    public ?Hello $hello = null;
    public int $seat = 0;
    private array $kept = [];

    /** Return an index into $request->legalActions, or one of its action arrays. */
    abstract public function choose(Request $request): int|array;

    public function onHello(Hello $hello): void
    {
    }

    public function onError(array $message): void
    {
        log('referee:', (string)($message['status'] ?? ''), (string)($message['message'] ?? ''));
    }

    /** A deal is over; $observation is your view right after it. */
    public function onDealEnd(array $message, array $observation): void
    {
    }

    public function onMatchEnd(array $message): void
    {
    }

    /** React to one message; the array to send back, or null. */
    public function handle(array $message): ?array
    {
        switch ($message['type'] ?? null) {
            case 'hello':
                return $this->ready($message);
            case 'request':
                return $this->answer($message);
            case 'error':
                $this->onError($message);
                break;
            case 'deal_end':
                $this->onDealEnd($message, $this->observationOf($message));
                break;
            case 'match_end':
                $this->onMatchEnd($message);
                break;
            case null:
                throw new ProtocolError('no "type"');
        }
        return null;
    }

    private function ready(array $message): array
    {
        $this->seat = (int)($message['seat'] ?? 0);
        $this->hello = new Hello(
            (string)($message['game'] ?? ''),
            (int)($message['players'] ?? 0),
            $this->seat,
            (array)($message['params'] ?? []),
            $message,
        );
        $this->onHello($this->hello);
        $reply = ['type' => 'ready', 'protocol' => PROTOCOL_VERSION];
        if ($this->name !== null) {
            $reply['name'] = $this->name;
        }
        if ($this->observations !== 'full') {
            $reply['observations'] = $this->observations;
        }
        return $reply;
    }

    /** The whole observation of a request or deal_end (PHP arrays are values: a copy). */
    private function observationOf(array $message): array
    {
        if (array_key_exists('delta', $message)) {
            $this->kept = apply_delta($this->kept, (array)$message['delta']);
        } elseif (is_array($message['observation'] ?? null)) {
            $this->kept = $message['observation'];
        } else {
            throw new ProtocolError('no observation');
        }
        return $this->kept;
    }

    private function answer(array $message): array
    {
        $legal = $message['legal_actions'] ?? null;
        if (!is_array($legal) || $legal === []) {
            throw new ProtocolError('no legal_actions');
        }
        $observation = $this->observationOf($message);
        $actions = array_map(
            fn (array $a) => new Action((string)($a['type'] ?? ''), $a['card'] ?? null, $a),
            $legal,
        );
        $this->debug = null;
        $choice = $this->choose(new Request(
            (int)($message['id'] ?? 0),
            (int)($message['deal'] ?? 0),
            (string)($observation['game'] ?? ''),
            $this->seat,
            $observation['hand'] ?? [],
            $actions,
            $observation,
            (int)($message['time_left_ms'] ?? 0),
            (int)($message['move_ms'] ?? 0),
        ));
        $reply = ['type' => 'action', 'id' => $message['id'] ?? null];
        $reply[is_int($choice) ? 'index' : 'action'] = $choice;
        if ($this->debug !== null) {
            $reply['debug'] = $this->debug;
        }
        return $reply;
    }
}

/** One line of input as a message; ProtocolError saying what and where if it is malformed. */
function parse(string $line, int $number): array
{
    try {
        $message = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
    } catch (\JsonException $e) {
        throw new ProtocolError("malformed message from the referee (line $number): " . $e->getMessage());
    }
    if (!is_array($message) || array_is_list($message) && $message !== []) {
        throw new ProtocolError("malformed message from the referee (line $number): not a JSON object");
    }
    return $message;
}

/**
 * The protocol loop: one JSON message per line of input until shutdown or end of input. A
 * malformed message ends the bot with status 1 after saying what and where on stderr.
 */
function run(Bot $bot, $input = STDIN, $output = STDOUT): void
{
    try {
        loop($bot, $input, $output);
    } catch (ProtocolError $e) {
        log('kozyri kit: ' . $e->getMessage());
        exit(1);
    }
}

/** The loop itself; ProtocolError if a message is malformed. */
function loop(Bot $bot, $input, $output): void
{
    $number = 0;
    while (($line = fgets($input)) !== false) {
        $number++;
        if (trim($line) === '') {
            continue;
        }
        $message = parse($line, $number);
        try {
            $reply = $bot->handle($message);
        } catch (ProtocolError $e) {
            throw new ProtocolError("malformed message from the referee (line $number): " . $e->getMessage());
        }
        if ($reply !== null) {
            fwrite($output, json_encode($reply, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR) . "\n");
            fflush($output);
        }
        if (($message['type'] ?? null) === 'shutdown') {
            break;
        }
    }
}
