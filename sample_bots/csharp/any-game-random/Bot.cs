// Any game, random: plays every game of the platform from the legal actions alone.
//
// The choice is random but reproducible: the generator is seeded from the game and the seat
// (the same generator as the JavaScript sample's), so the same match plays out the same way
// again, which makes a replay from the server easy to repeat with `arena match --repeat`.
using System.Collections.Generic;
using Kozyri;

class AnyGameRandom : Bot
{
    private uint state;

    public AnyGameRandom() { Name = "any-game-random-csharp"; }

    public override void OnHello(JsonObject hello)
    {
        state = Hash(Game + "/" + Players + "/" + Seat);
        Log("playing", Game, "in seat", Seat, "of", Players);
    }

    public override int Choose(Observation observation, List<Action> legalActions)
    {
        int index = (int)(Random() * legalActions.Count);
        Debug = (index + 1) + " of " + legalActions.Count;
        return index;
    }

    /// <summary>FNV-1a over the UTF-16 units of text.</summary>
    static uint Hash(string text)
    {
        uint h = 2166136261;
        foreach (char c in text) h = unchecked((h ^ c) * 16777619);
        return h;
    }

    /// <summary>mulberry32: a small seeded generator, uniform in [0, 1).</summary>
    double Random()
    {
        unchecked
        {
            state += 0x6d2b79f5;
            uint t = (state ^ (state >> 15)) * (1 | state);
            t = (t + (t ^ (t >> 7)) * (61 | t)) ^ t;
            return (t ^ (t >> 14)) / 4294967296.0;
        }
    }

    static void Main() { new AnyGameRandom().Run(); }
}
