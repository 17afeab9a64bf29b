// Unit tests of the C# kit: a small exe, no test library. From sample_bots/kit/csharp:
//   mcs -out:/tmp/kit-test.exe tests/KitTest.cs Json.cs Bot.cs && mono /tmp/kit-test.exe
// Prints one line per test and exits with status 1 if any failed.
using System;
using System.Collections.Generic;
using Kozyri;

class Recorder : Bot
{
    public readonly List<string> Seen = new List<string>();
    public readonly List<string> Kinds = new List<string>();

    public Recorder() { Name = "recorder"; }

    public override int Choose(Observation observation, List<Kozyri.Action> legal)
    {
        Seen.Add(observation.ToString());
        Kinds.Add(legal[legal.Count - 1].Type);
        Debug = "hand " + observation.Hand.Count;
        observation.Raw["hand"] = new List<object>(); // the bot's copy: the kit's must not change
        return legal.Count - 1;
    }
}

static class KitTest
{
    const string Hello = "{\"type\":\"hello\",\"protocol\":1,\"game\":\"svoi-kozyri\",\"players\":2,\"seat\":1,"
        + "\"params\":{\"deals\":1},\"variant\":null,\"time\":{\"init_ms\":10000},\"name\":\"x\"}";
    const string Full = "{\"type\":\"request\",\"id\":3,\"deal\":0,\"observation\":{\"game\":\"svoi-kozyri\","
        + "\"seat\":1,\"hand\":[\"8S\",\"QS\"],\"pile\":[\"9C\"],\"hand_counts\":[9,2],\"gone\":true,\"ratio\":0.25,"
        + "\"history\":[{\"type\":\"lead\",\"seat\":0,\"card\":\"9C\"}]},"
        + "\"legal_actions\":[{\"type\":\"beat\",\"card\":\"QS\"},{\"type\":\"pick_up\"}],\"time_left_ms\":29500,\"move_ms\":1000}";
    const string Delta = "{\"type\":\"request\",\"id\":4,\"deal\":0,\"delta\":{\"set\":{\"hand\":[\"8S\"],"
        + "\"hand_counts\":[8,1],\"mode\":\"respond\"},\"append\":{\"pile\":[\"QS\",\"TH\"],"
        + "\"history\":[{\"type\":\"beat\",\"seat\":1,\"card\":\"QS\"}]},\"drop\":[\"gone\"]},"
        + "\"legal_actions\":[{\"type\":\"second\",\"card\":\"8S\"}],\"time_left_ms\":29000,\"move_ms\":1000}";
    const string Rebuilt = "{\"game\":\"svoi-kozyri\",\"seat\":1,\"hand\":[\"8S\"],\"pile\":[\"9C\",\"QS\",\"TH\"],"
        + "\"hand_counts\":[8,1],\"ratio\":0.25,\"history\":[{\"type\":\"lead\",\"seat\":0,\"card\":\"9C\"},"
        + "{\"type\":\"beat\",\"seat\":1,\"card\":\"QS\"}],\"mode\":\"respond\"}";

    static int failures = 0;

    static void Equal(string test, object got, object want)
    {
        bool ok = Equals(got == null ? null : got.ToString(), want == null ? null : want.ToString());
        Console.WriteLine((ok ? "ok   " : "FAIL ") + test + (ok ? "" : ": got " + got + ", want " + want));
        if (!ok) failures++;
    }

    static string ErrorOf(Func<object> action)
    {
        try { action(); }
        catch (KitException error) { return error.Message; }
        return "no error";
    }

    static void Contains(string test, string text, string part)
    {
        Equal(test, text.Contains(part) ? part : text, part);
    }

    static int Main()
    {
        var bot = new Recorder();
        Equal("hello is answered with ready, asking for deltas", bot.Handle(Hello),
            "{\"type\":\"ready\",\"protocol\":1,\"name\":\"recorder\",\"observations\":\"delta\"}");
        Equal("the seat comes from hello", bot.Seat, 1);
        Equal("a request is answered by index with its id", bot.Handle(Full),
            "{\"type\":\"action\",\"id\":3,\"index\":1,\"debug\":\"hand 2\"}");
        Equal("legal actions are typed", bot.Kinds[0], "pick_up");
        Equal("a delta rebuilds the whole observation, exactly", bot.Handle(Delta),
            "{\"type\":\"action\",\"id\":4,\"index\":0,\"debug\":\"hand 1\"}");
        Equal("... key for key and value for value", bot.Seen[1], Rebuilt);
        bot.Handle("{\"type\":\"deal_end\",\"deal\":0,\"delta\":{\"set\":{\"deal\":1}}}");
        Equal("unknown messages are ignored", bot.Handle("{\"type\":\"news\",\"x\":[1,2.5,-3e2,null,false]}"), null);
        bot.Handle("{\"type\":\"shutdown\"}");
        Equal("shutdown ends the loop", bot.Finished, true);

        Contains("malformed JSON names the place", ErrorOf(() => new Recorder().Handle("{\"type\":\"hello\",\"seat\":")),
            "malformed JSON: expected a value at character 23, found the end");
        Contains("trailing text is refused", ErrorOf(() => Json.Parse("{} x")), "expected the end of the text at character 3");
        Contains("a message without a type is refused clearly", ErrorOf(() => new Recorder().Handle("{\"id\":1}")),
            "expected a string at 'type'");
        Contains("a message must be an object", ErrorOf(() => new Recorder().Handle("[1]")), "must be a JSON object");
        var lost = new Recorder();
        lost.Handle(Hello);
        Contains("a delta appending to a missing list is refused", ErrorOf(() => lost.Handle(Delta)), "appends to");

        string text = "{\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83c\\udca1\",\"n\":[0,-12,3.25,1e3,12345678901234567890]}";
        Equal("strings and numbers round-trip", Json.Write(Json.Parse(text)), text);
        Console.WriteLine(failures == 0 ? "all passed" : failures + " failed");
        return failures == 0 ? 0 : 1;
    }
}
