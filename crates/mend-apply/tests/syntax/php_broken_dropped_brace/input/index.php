<?php

function greet(string $name): string
{
    return "Hello, " . $name;
}

echo greet($_GET["name"] ?? "world");
