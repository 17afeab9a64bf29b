<?php
/*
 * Any game, random, in PHP: a uniformly random legal action in every game of the platform.
 *
 * The generator is seeded from the game and the seat, so the same match (same seed, same
 * bots) plays out the same way again. The kit (found through KOZYRI_KIT) does the protocol.
 */

declare(strict_types=1);

require getenv('KOZYRI_KIT') . '/php/kozyri_bot.php';

final class AnyGameRandom extends Kozyri\Bot
{
    private Random\Randomizer $random;

    public function __construct()
    {
        $this->name = 'any-game-random-php';
        $this->random = new Random\Randomizer(new Random\Engine\Mt19937(0));
    }

    public function onHello(Kozyri\Hello $hello): void
    {
        $seed = crc32("{$hello->game}/{$hello->players}/{$hello->seat}");
        $this->random = new Random\Randomizer(new Random\Engine\Mt19937($seed));
        Kozyri\log("playing {$hello->game} in seat {$hello->seat} of {$hello->players}");
    }

    public function choose(Kozyri\Request $request): int
    {
        $count = count($request->legalActions);
        $index = $this->random->getInt(0, $count - 1);
        $this->debug = ($index + 1) . " of $count";
        return $index;
    }
}

Kozyri\run(new AnyGameRandom());
